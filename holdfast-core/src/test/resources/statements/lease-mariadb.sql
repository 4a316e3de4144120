-- tryAcquire (exclusive); returns the final row: granted iff column 4 is the caller and column 5 true
INSERT INTO holdfast_leases (name, owner, token, acquired_at, expires_at) VALUES (?, ?, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND) ON DUPLICATE KEY UPDATE token = IF(expires_at <= UTC_TIMESTAMP(6), token + 1, token), acquired_at = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(acquired_at), IF(acquired_at = VALUES(acquired_at), acquired_at + INTERVAL 1 MICROSECOND, acquired_at)), owner = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(owner), owner), expires_at = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(expires_at), expires_at) RETURNING token, acquired_at, expires_at, owner, acquired_at = UTC_TIMESTAMP(6);

-- tryLock (re-entrant)
INSERT INTO holdfast_leases (name, owner, token, acquired_at, expires_at) VALUES (?, ?, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND) ON DUPLICATE KEY UPDATE token = IF(expires_at <= UTC_TIMESTAMP(6), token + 1, token), acquired_at = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(acquired_at), acquired_at), owner = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(owner), owner), expires_at = IF(expires_at <= UTC_TIMESTAMP(6) OR owner = VALUES(owner), GREATEST(VALUES(expires_at), acquired_at), expires_at) RETURNING token, acquired_at, expires_at, owner, TRUE;

-- lock: an attempt that refuses while an earlier live waiter is queued; binds then [<name>, <waiter>, <name>, <waiter>, <name>, <waiter>, <name>, <waiter>, <name>, <waiter>, <name>, <waiter>, <name>, <waiter>, <name>, <waiter>]
INSERT INTO holdfast_leases (name, owner, token, acquired_at, expires_at) VALUES (?, ?, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND) ON DUPLICATE KEY UPDATE token = IF((expires_at <= UTC_TIMESTAMP(6) AND NOT EXISTS (SELECT 1 FROM holdfast_leases_queue q WHERE q.name = ? AND q.owner <> ? AND q.wait_until > UTC_TIMESTAMP(6) AND q.queued_at < COALESCE((SELECT m.queued_at FROM holdfast_leases_queue m WHERE m.name = ? AND m.owner = ? AND m.wait_until > UTC_TIMESTAMP(6)), TIMESTAMP '9999-12-31 00:00:00'))), token + 1, token), acquired_at = IF((expires_at <= UTC_TIMESTAMP(6) AND NOT EXISTS (SELECT 1 FROM holdfast_leases_queue q WHERE q.name = ? AND q.owner <> ? AND q.wait_until > UTC_TIMESTAMP(6) AND q.queued_at < COALESCE((SELECT m.queued_at FROM holdfast_leases_queue m WHERE m.name = ? AND m.owner = ? AND m.wait_until > UTC_TIMESTAMP(6)), TIMESTAMP '9999-12-31 00:00:00'))), VALUES(acquired_at), IF(acquired_at = VALUES(acquired_at), acquired_at + INTERVAL 1 MICROSECOND, acquired_at)), owner = IF((expires_at <= UTC_TIMESTAMP(6) AND NOT EXISTS (SELECT 1 FROM holdfast_leases_queue q WHERE q.name = ? AND q.owner <> ? AND q.wait_until > UTC_TIMESTAMP(6) AND q.queued_at < COALESCE((SELECT m.queued_at FROM holdfast_leases_queue m WHERE m.name = ? AND m.owner = ? AND m.wait_until > UTC_TIMESTAMP(6)), TIMESTAMP '9999-12-31 00:00:00'))), VALUES(owner), owner), expires_at = IF((expires_at <= UTC_TIMESTAMP(6) AND NOT EXISTS (SELECT 1 FROM holdfast_leases_queue q WHERE q.name = ? AND q.owner <> ? AND q.wait_until > UTC_TIMESTAMP(6) AND q.queued_at < COALESCE((SELECT m.queued_at FROM holdfast_leases_queue m WHERE m.name = ? AND m.owner = ? AND m.wait_until > UTC_TIMESTAMP(6)), TIMESTAMP '9999-12-31 00:00:00'))), VALUES(expires_at), expires_at) RETURNING token, acquired_at, expires_at, owner, acquired_at = UTC_TIMESTAMP(6);

-- lock: a refused attempt joins the queue or refreshes its entry
INSERT INTO holdfast_leases_queue (name, owner, queued_at, wait_until) VALUES (?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND) ON DUPLICATE KEY UPDATE queued_at = IF(wait_until <= UTC_TIMESTAMP(6), VALUES(queued_at), queued_at), wait_until = VALUES(wait_until);

-- lock: a granted waiter leaves the queue
DELETE FROM holdfast_leases_queue WHERE name = ? AND owner = ?;

-- lock: a waiter that gave up leaves the queue (binds [<name>, <waiter>])
DELETE FROM holdfast_leases_queue WHERE name = ? AND owner = ?;

-- renew; then the row is read
UPDATE holdfast_leases SET expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND WHERE name = ? AND owner = ? AND token = ? AND expires_at > UTC_TIMESTAMP(6);

-- release
UPDATE holdfast_leases SET broken_by = NULL, broken_at = NULL, expires_at = acquired_at WHERE name = ? AND owner = ? AND token = ? AND expires_at > UTC_TIMESTAMP(6);

-- unlock (any grant of the owner), with a minimum hold
UPDATE holdfast_leases SET broken_by = NULL, broken_at = NULL, expires_at = CASE WHEN (acquired_at + INTERVAL ? MICROSECOND) > UTC_TIMESTAMP(6) THEN (acquired_at + INTERVAL ? MICROSECOND) ELSE acquired_at END WHERE name = ? AND owner = ? AND expires_at > UTC_TIMESTAMP(6);

-- cohort hand-off: reserve a block of tokens, or renew before a hand-off (never shortening); then the row is read
UPDATE holdfast_leases SET token = token + ?, expires_at = GREATEST(expires_at, (UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)) WHERE name = ? AND owner = ? AND token = ? AND expires_at > UTC_TIMESTAMP(6);

-- cohort hand-off: the row after a reservation
SELECT token, expires_at, UTC_TIMESTAMP(6) FROM holdfast_leases WHERE name = ? AND owner = ?;

-- batching: the exclusive acquire of many leases (here two), in name order; binds name, owner, ttl micros of each
INSERT INTO holdfast_leases (name, owner, token, acquired_at, expires_at) VALUES (?, ?, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND), (?, ?, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND) ON DUPLICATE KEY UPDATE token = IF(expires_at <= UTC_TIMESTAMP(6), token + 1, token), acquired_at = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(acquired_at), IF(acquired_at = VALUES(acquired_at), acquired_at + INTERVAL 1 MICROSECOND, acquired_at)), owner = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(owner), owner), expires_at = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(expires_at), expires_at) RETURNING name, token, acquired_at, expires_at, owner, acquired_at = UTC_TIMESTAMP(6);

-- batching: the release of many grants (here two), rows locked in name order; binds the names, then name, owner, token of each; returns each released name and whether anyone may wait
INSERT INTO holdfast_leases (name, owner, token, acquired_at, expires_at) SELECT s.name, s.owner, s.token, s.acquired_at, s.expires_at FROM holdfast_leases s WHERE s.name IN (?, ?) AND (s.name, s.owner, s.token) IN ((?, ?, ?), (?, ?, ?)) AND s.expires_at > UTC_TIMESTAMP(6) ORDER BY s.name FOR UPDATE ON DUPLICATE KEY UPDATE broken_by = NULL, broken_at = NULL, expires_at = VALUES(acquired_at) RETURNING name, FALSE;

-- find
SELECT name, owner, token, acquired_at, expires_at FROM holdfast_leases WHERE name = ?;

-- diagnosing a refused release or renewal: the row and who broke it
SELECT name, owner, token, acquired_at, expires_at, broken_by, broken_at FROM holdfast_leases WHERE name = ?;

-- lock: the bound ran out: who holds the lease, and how many live waiters queued ahead (binds [<name>, <waiter>, <name>, <waiter>, <name>])
SELECT l.owner, l.token, l.acquired_at, l.expires_at, n.t, (SELECT COUNT(*) FROM holdfast_leases_queue q WHERE q.name = ? AND q.owner <> ? AND q.wait_until > n.t AND q.queued_at < COALESCE((SELECT m.queued_at FROM holdfast_leases_queue m WHERE m.name = ? AND m.owner = ? AND m.wait_until > n.t), TIMESTAMP '9999-12-31 00:00:00')) FROM (SELECT UTC_TIMESTAMP(6) AS t) n LEFT JOIN holdfast_leases l ON l.name = ? AND l.expires_at > n.t;

-- list (operators)
SELECT name, owner, token, acquired_at, expires_at FROM holdfast_leases WHERE expires_at > UTC_TIMESTAMP(6) ORDER BY name;

-- LeaseView.live: a later page (operators)
SELECT name, owner, token, acquired_at, expires_at FROM holdfast_leases WHERE expires_at > UTC_TIMESTAMP(6) AND name > ? ORDER BY name LIMIT ?;

-- LeaseView.waiters: all, the first page (operators)
SELECT name, place, lease_owner, queued_at, wait_until FROM (SELECT name, ROW_NUMBER() OVER (PARTITION BY name ORDER BY queued_at, owner) AS place, CAST(NULL AS CHAR) AS lease_owner, queued_at, wait_until FROM holdfast_leases_queue WHERE wait_until > UTC_TIMESTAMP(6)) q ORDER BY name, place LIMIT ?;

-- LeaseView.waiters of one name, a later page (operators)
SELECT name, place, lease_owner, queued_at, wait_until FROM (SELECT name, ROW_NUMBER() OVER (PARTITION BY name ORDER BY queued_at, owner) AS place, CAST(NULL AS CHAR) AS lease_owner, queued_at, wait_until FROM holdfast_leases_queue WHERE wait_until > UTC_TIMESTAMP(6) AND name = ?) q WHERE (name > ? OR (name = ? AND place > ?)) ORDER BY name, place LIMIT ?;

-- forceRelease (operators)
UPDATE holdfast_leases SET broken_by = ?, broken_at = UTC_TIMESTAMP(6), expires_at = acquired_at WHERE name = ? AND expires_at > UTC_TIMESTAMP(6);

