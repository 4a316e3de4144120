-- tryLock, relaxed commit
INSERT INTO holdfast_locks (lock_type, resource_id, lock_id, lock_owner, acquired_at, expires_at) VALUES (?, ?, ?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND) ON DUPLICATE KEY UPDATE ended_lock_id = CASE WHEN expires_at <= VALUES(acquired_at) AND lock_id IS NOT NULL THEN lock_id ELSE ended_lock_id END, ended_owner = CASE WHEN expires_at <= VALUES(acquired_at) AND lock_id IS NOT NULL THEN lock_owner ELSE ended_owner END, ended_reason = CASE WHEN expires_at <= VALUES(acquired_at) AND lock_id IS NOT NULL THEN 'EXPIRED' ELSE ended_reason END, ended_by = CASE WHEN expires_at <= VALUES(acquired_at) AND lock_id IS NOT NULL THEN NULL ELSE ended_by END, ended_at = CASE WHEN expires_at <= VALUES(acquired_at) AND lock_id IS NOT NULL THEN expires_at ELSE ended_at END, lock_id = IF(expires_at <= VALUES(acquired_at), VALUES(lock_id), lock_id), lock_owner = IF(expires_at <= VALUES(acquired_at), VALUES(lock_owner), lock_owner), acquired_at = IF(expires_at <= VALUES(acquired_at), VALUES(acquired_at), acquired_at), expires_at = IF(expires_at <= VALUES(acquired_at), VALUES(expires_at), expires_at) RETURNING lock_id, lock_owner, acquired_at, expires_at;

-- tryLock, durable commit
INSERT INTO holdfast_locks (lock_type, resource_id, lock_id, lock_owner, acquired_at, expires_at) VALUES (?, ?, ?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND) ON DUPLICATE KEY UPDATE ended_lock_id = CASE WHEN expires_at <= VALUES(acquired_at) AND lock_id IS NOT NULL THEN lock_id ELSE ended_lock_id END, ended_owner = CASE WHEN expires_at <= VALUES(acquired_at) AND lock_id IS NOT NULL THEN lock_owner ELSE ended_owner END, ended_reason = CASE WHEN expires_at <= VALUES(acquired_at) AND lock_id IS NOT NULL THEN 'EXPIRED' ELSE ended_reason END, ended_by = CASE WHEN expires_at <= VALUES(acquired_at) AND lock_id IS NOT NULL THEN NULL ELSE ended_by END, ended_at = CASE WHEN expires_at <= VALUES(acquired_at) AND lock_id IS NOT NULL THEN expires_at ELSE ended_at END, lock_id = IF(expires_at <= VALUES(acquired_at), VALUES(lock_id), lock_id), lock_owner = IF(expires_at <= VALUES(acquired_at), VALUES(lock_owner), lock_owner), acquired_at = IF(expires_at <= VALUES(acquired_at), VALUES(acquired_at), acquired_at), expires_at = IF(expires_at <= VALUES(acquired_at), VALUES(expires_at), expires_at) RETURNING lock_id, lock_owner, acquired_at, expires_at;

-- reacquire: a new id for the owner's live lock, relaxed
UPDATE holdfast_locks SET ended_lock_id = lock_id, ended_owner = lock_owner, ended_reason = 'REPLACED', ended_by = lock_owner, ended_at = UTC_TIMESTAMP(6), lock_id = ?, acquired_at = UTC_TIMESTAMP(6), expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND WHERE lock_type = ? AND resource_id = ? AND lock_owner = ? AND lock_id IS NOT NULL AND expires_at > UTC_TIMESTAMP(6);

-- reacquire, durable
UPDATE holdfast_locks SET ended_lock_id = lock_id, ended_owner = lock_owner, ended_reason = 'REPLACED', ended_by = lock_owner, ended_at = UTC_TIMESTAMP(6), lock_id = ?, acquired_at = UTC_TIMESTAMP(6), expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND WHERE lock_type = ? AND resource_id = ? AND lock_owner = ? AND lock_id IS NOT NULL AND expires_at > UTC_TIMESTAMP(6);

-- checkLock
SELECT lock_type, resource_id, lock_owner, acquired_at, expires_at, CASE WHEN expires_at > UTC_TIMESTAMP(6) THEN 1 ELSE 0 END FROM holdfast_locks WHERE lock_id = ?;

-- checkLock: how an id that no row holds ended
SELECT lock_type, resource_id, ended_owner, ended_reason, ended_by, ended_at, lock_owner, acquired_at, expires_at, CASE WHEN lock_id IS NOT NULL AND expires_at > UTC_TIMESTAMP(6) THEN 1 ELSE 0 END FROM holdfast_locks WHERE ended_lock_id = ?;

-- releaseLock, relaxed
UPDATE holdfast_locks SET ended_lock_id = lock_id, ended_owner = lock_owner, ended_reason = 'RELEASED', ended_by = lock_owner, ended_at = UTC_TIMESTAMP(6), lock_id = NULL, expires_at = TIMESTAMP '2000-01-01 00:00:00' WHERE lock_id = ? AND expires_at > UTC_TIMESTAMP(6);

-- releaseLock with owner, durable
UPDATE holdfast_locks SET ended_lock_id = lock_id, ended_owner = lock_owner, ended_reason = 'RELEASED', ended_by = lock_owner, ended_at = UTC_TIMESTAMP(6), lock_id = NULL, expires_at = TIMESTAMP '2000-01-01 00:00:00' WHERE lock_id = ? AND expires_at > UTC_TIMESTAMP(6) AND lock_owner = ?;

-- extendLockExpiration
UPDATE holdfast_locks SET expires_at = LEAST(expires_at + INTERVAL ? MICROSECOND, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND) WHERE lock_id = ? AND expires_at > UTC_TIMESTAMP(6);

-- extendLockExpiration with owner
UPDATE holdfast_locks SET expires_at = LEAST(expires_at + INTERVAL ? MICROSECOND, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND) WHERE lock_id = ? AND expires_at > UTC_TIMESTAMP(6) AND lock_owner = ?;

-- holder (operators)
SELECT lock_type, resource_id, lock_owner, acquired_at, expires_at FROM holdfast_locks WHERE lock_type = ? AND resource_id = ? AND lock_id IS NOT NULL AND expires_at > UTC_TIMESTAMP(6);

-- heldLocks by type and owner (operators)
SELECT lock_type, resource_id, lock_owner, acquired_at, expires_at FROM holdfast_locks WHERE lock_id IS NOT NULL AND expires_at > UTC_TIMESTAMP(6) AND lock_type = ? AND lock_owner = ? ORDER BY expires_at, lock_type, resource_id LIMIT ?;

-- heldLocks, all (operators)
SELECT lock_type, resource_id, lock_owner, acquired_at, expires_at FROM holdfast_locks WHERE lock_id IS NOT NULL AND expires_at > UTC_TIMESTAMP(6) ORDER BY expires_at, lock_type, resource_id LIMIT ?;

-- heldLocksAfter by type and owner, a later page (operators)
SELECT lock_type, resource_id, lock_owner, acquired_at, expires_at FROM holdfast_locks WHERE lock_id IS NOT NULL AND expires_at > UTC_TIMESTAMP(6) AND lock_type = ? AND lock_owner = ? AND (lock_type > ? OR (lock_type = ? AND resource_id > ?)) ORDER BY lock_type, resource_id LIMIT ?;

-- heldLocksAfter, all, the first page (operators)
SELECT lock_type, resource_id, lock_owner, acquired_at, expires_at FROM holdfast_locks WHERE lock_id IS NOT NULL AND expires_at > UTC_TIMESTAMP(6) ORDER BY lock_type, resource_id LIMIT ?;

-- forceRelease (operators)
UPDATE holdfast_locks SET ended_lock_id = lock_id, ended_owner = lock_owner, ended_reason = 'BROKEN', ended_by = ?, ended_at = UTC_TIMESTAMP(6), lock_id = NULL, expires_at = TIMESTAMP '2000-01-01 00:00:00' WHERE lock_type = ? AND resource_id = ? AND lock_id IS NOT NULL AND expires_at > UTC_TIMESTAMP(6);

-- purgeExpired (operators)
DELETE FROM holdfast_locks WHERE expires_at <= UTC_TIMESTAMP(6) LIMIT ?;

