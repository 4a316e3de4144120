-- tryAcquire (exclusive)
INSERT INTO holdfast_leases (name, owner, token, acquired_at, expires_at) VALUES (?, ?, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND) ON DUPLICATE KEY UPDATE token = IF(expires_at <= UTC_TIMESTAMP(6), token + 1, token), acquired_at = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(acquired_at), IF(acquired_at = VALUES(acquired_at), acquired_at - INTERVAL 1 MICROSECOND, acquired_at)), owner = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(owner), owner), expires_at = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(expires_at), expires_at) RETURNING token, acquired_at, expires_at, owner, acquired_at = UTC_TIMESTAMP(6);

-- tryLock (re-entrant)
INSERT INTO holdfast_leases (name, owner, token, acquired_at, expires_at) VALUES (?, ?, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND) ON DUPLICATE KEY UPDATE token = IF(expires_at <= UTC_TIMESTAMP(6), token + 1, token), acquired_at = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(acquired_at), acquired_at), owner = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(owner), owner), expires_at = IF(expires_at <= UTC_TIMESTAMP(6) OR owner = VALUES(owner), VALUES(expires_at), expires_at) RETURNING token, acquired_at, expires_at, owner, TRUE;

-- renew
UPDATE holdfast_leases SET expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND WHERE name = ? AND owner = ? AND token = ? AND expires_at > UTC_TIMESTAMP(6);

-- the expiry a release sets
acquired_at;

-- the expiry a release with a minimum hold sets
CASE WHEN (acquired_at + INTERVAL ? MICROSECOND) > UTC_TIMESTAMP(6) THEN (acquired_at + INTERVAL ? MICROSECOND) ELSE acquired_at END;

