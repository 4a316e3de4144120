-- tryAcquire (exclusive); returns the final row: granted iff column 4 is the caller and column 5 true
INSERT INTO holdfast_leases (name, owner, token, acquired_at, expires_at) VALUES (?, ?, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND) ON DUPLICATE KEY UPDATE token = IF(expires_at <= UTC_TIMESTAMP(6), token + 1, token), acquired_at = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(acquired_at), IF(acquired_at = VALUES(acquired_at), acquired_at + INTERVAL 1 MICROSECOND, acquired_at)), owner = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(owner), owner), handed_to = IF(expires_at <= UTC_TIMESTAMP(6), NULL, handed_to), expires_at = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(expires_at), expires_at) RETURNING token, acquired_at, expires_at, owner, acquired_at = UTC_TIMESTAMP(6);

-- tryLock (re-entrant)
INSERT INTO holdfast_leases (name, owner, token, acquired_at, expires_at) VALUES (?, ?, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND) ON DUPLICATE KEY UPDATE token = IF(expires_at <= UTC_TIMESTAMP(6), token + 1, token), acquired_at = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(acquired_at), acquired_at), owner = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(owner), owner), handed_to = IF(expires_at <= UTC_TIMESTAMP(6), NULL, handed_to), expires_at = IF(expires_at <= UTC_TIMESTAMP(6) OR owner = VALUES(owner), GREATEST(VALUES(expires_at), acquired_at), expires_at) RETURNING token, acquired_at, expires_at, owner, TRUE;

-- lock: an attempt that refuses while an earlier live waiter is queued; binds then [<waiter>, <waiter>, <waiter>, <waiter>, <waiter>, <waiter>, <waiter>, <waiter>, <waiter>, <waiter>, <waiter>, <waiter>, <waiter>, <waiter>, <waiter>, 3000000, <waiter>, <waiter>]
INSERT INTO holdfast_leases (name, owner, token, acquired_at, expires_at) VALUES (?, ?, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND) ON DUPLICATE KEY UPDATE token = IF((expires_at <= UTC_TIMESTAMP(6) AND NOT EXISTS (SELECT 1 FROM holdfast_leases_queue q WHERE q.name = holdfast_leases.name AND q.owner <> ? AND q.wait_until > UTC_TIMESTAMP(6) AND q.place > COALESCE(holdfast_leases.served, '') AND q.queued_at < COALESCE((SELECT m.queued_at FROM holdfast_leases_queue m WHERE m.name = holdfast_leases.name AND m.owner = ? AND m.wait_until > UTC_TIMESTAMP(6)), TIMESTAMP '9999-12-31 00:00:00'))), token + 1, token), acquired_at = IF((expires_at <= UTC_TIMESTAMP(6) AND NOT EXISTS (SELECT 1 FROM holdfast_leases_queue q WHERE q.name = holdfast_leases.name AND q.owner <> ? AND q.wait_until > UTC_TIMESTAMP(6) AND q.place > COALESCE(holdfast_leases.served, '') AND q.queued_at < COALESCE((SELECT m.queued_at FROM holdfast_leases_queue m WHERE m.name = holdfast_leases.name AND m.owner = ? AND m.wait_until > UTC_TIMESTAMP(6)), TIMESTAMP '9999-12-31 00:00:00'))), VALUES(acquired_at), IF(acquired_at = VALUES(acquired_at), acquired_at + INTERVAL 1 MICROSECOND, acquired_at)), owner = IF((expires_at <= UTC_TIMESTAMP(6) AND NOT EXISTS (SELECT 1 FROM holdfast_leases_queue q WHERE q.name = holdfast_leases.name AND q.owner <> ? AND q.wait_until > UTC_TIMESTAMP(6) AND q.place > COALESCE(holdfast_leases.served, '') AND q.queued_at < COALESCE((SELECT m.queued_at FROM holdfast_leases_queue m WHERE m.name = holdfast_leases.name AND m.owner = ? AND m.wait_until > UTC_TIMESTAMP(6)), TIMESTAMP '9999-12-31 00:00:00'))), VALUES(owner), owner), handed_to = IF((expires_at <= UTC_TIMESTAMP(6) AND NOT EXISTS (SELECT 1 FROM holdfast_leases_queue q WHERE q.name = holdfast_leases.name AND q.owner <> ? AND q.wait_until > UTC_TIMESTAMP(6) AND q.place > COALESCE(holdfast_leases.served, '') AND q.queued_at < COALESCE((SELECT m.queued_at FROM holdfast_leases_queue m WHERE m.name = holdfast_leases.name AND m.owner = ? AND m.wait_until > UTC_TIMESTAMP(6)), TIMESTAMP '9999-12-31 00:00:00'))), ?, handed_to), served = IF((expires_at <= UTC_TIMESTAMP(6) AND NOT EXISTS (SELECT 1 FROM holdfast_leases_queue q WHERE q.name = holdfast_leases.name AND q.owner <> ? AND q.wait_until > UTC_TIMESTAMP(6) AND q.place > COALESCE(holdfast_leases.served, '') AND q.queued_at < COALESCE((SELECT m.queued_at FROM holdfast_leases_queue m WHERE m.name = holdfast_leases.name AND m.owner = ? AND m.wait_until > UTC_TIMESTAMP(6)), TIMESTAMP '9999-12-31 00:00:00'))) AND (SELECT m.place FROM holdfast_leases_queue m WHERE m.name = holdfast_leases.name AND m.owner = ?) > COALESCE(served, ''), (SELECT m.place FROM holdfast_leases_queue m WHERE m.name = holdfast_leases.name AND m.owner = ?), served), expires_at = IF((expires_at <= UTC_TIMESTAMP(6) AND NOT EXISTS (SELECT 1 FROM holdfast_leases_queue q WHERE q.name = holdfast_leases.name AND q.owner <> ? AND q.wait_until > UTC_TIMESTAMP(6) AND q.place > COALESCE(holdfast_leases.served, '') AND q.queued_at < COALESCE((SELECT m.queued_at FROM holdfast_leases_queue m WHERE m.name = holdfast_leases.name AND m.owner = ? AND m.wait_until > UTC_TIMESTAMP(6)), TIMESTAMP '9999-12-31 00:00:00'))), VALUES(expires_at), expires_at), waiters_until = IF(acquired_at = UTC_TIMESTAMP(6), waiters_until, GREATEST(COALESCE(waiters_until, UTC_TIMESTAMP(6)), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)) RETURNING token, acquired_at, expires_at, owner, acquired_at = UTC_TIMESTAMP(6) OR (handed_to <=> ? AND expires_at > UTC_TIMESTAMP(6)), COALESCE((SELECT m.place FROM holdfast_leases_queue m WHERE m.name = holdfast_leases.name AND m.owner = ?) <= served, FALSE);

-- lock: a refused attempt joins the queue or refreshes its entry
INSERT INTO holdfast_leases_queue (name, owner, queued_at, wait_until, lease_owner, ttl_micros, listener) VALUES (?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, ?, ?, ?) ON DUPLICATE KEY UPDATE queued_at = IF(wait_until <= UTC_TIMESTAMP(6), VALUES(queued_at), queued_at), wait_until = VALUES(wait_until), lease_owner = VALUES(lease_owner), ttl_micros = VALUES(ttl_micros), listener = VALUES(listener);

-- lock: a granted waiter leaves the queue
DELETE FROM holdfast_leases_queue WHERE name = ? AND owner = ?;

-- lock: a waiter that gave up leaves the queue (binds [<name>, <waiter>])
DELETE FROM holdfast_leases_queue WHERE name = ? AND owner = ?;

-- renew; then the row is read
UPDATE holdfast_leases SET expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND WHERE name = ? AND owner = ? AND token = ? AND expires_at > UTC_TIMESTAMP(6);

-- release; matches only while the row's waiter mark is past, else the hand-off below runs
UPDATE holdfast_leases SET broken_by = NULL, broken_at = NULL, expires_at = acquired_at WHERE name = ? AND owner = ? AND token = ? AND expires_at > UTC_TIMESTAMP(6) AND (waiters_until IS NULL OR waiters_until <= UTC_TIMESTAMP(6));

-- unlock (any grant of the owner), with a minimum hold
UPDATE holdfast_leases SET broken_by = NULL, broken_at = NULL, expires_at = CASE WHEN (acquired_at + INTERVAL ? MICROSECOND) > UTC_TIMESTAMP(6) THEN (acquired_at + INTERVAL ? MICROSECOND) ELSE acquired_at END WHERE name = ? AND owner = ? AND expires_at > UTC_TIMESTAMP(6);

-- MariaDB: a release (without a minimum hold) reads the first live waiter and whether its service is alive; binds name, owner, token
SELECT q.owner, q.lease_owner, q.ttl_micros, q.listener, q.place, IS_USED_LOCK(CONCAT('holdfast_live_', q.listener)) = q.listener FROM holdfast_leases s JOIN holdfast_leases_queue q ON q.name = s.name AND q.wait_until > UTC_TIMESTAMP(6) AND q.place > COALESCE(s.served, '') WHERE s.name = ? AND s.owner = ? AND s.token = ? AND s.expires_at > UTC_TIMESTAMP(6) ORDER BY q.place LIMIT 1;

-- MariaDB: the same read by the wake-up connection right after a grant was handed to its service, for that grant's release; binds name, token
SELECT q.owner, q.lease_owner, q.ttl_micros, q.listener, q.place, IS_USED_LOCK(CONCAT('holdfast_live_', q.listener)) = q.listener FROM holdfast_leases s JOIN holdfast_leases_queue q ON q.name = s.name AND q.wait_until > UTC_TIMESTAMP(6) AND q.place > COALESCE(s.served, '') WHERE s.name = ? AND s.token = ? AND s.expires_at > UTC_TIMESTAMP(6) ORDER BY q.place LIMIT 1;

-- MariaDB: then hands that waiter the lease if the caller still holds it and the waiter, as read, is still the first live one and alive; binds lease owner, TTL, waiter, place, name, owner, token, place, wake-up connection, lease owner, TTL
UPDATE holdfast_leases SET token = token + 1, owner = ?, acquired_at = UTC_TIMESTAMP(6), expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, handed_to = ?, served = ?, broken_by = NULL, broken_at = NULL WHERE name = ? AND owner = ? AND token = ? AND expires_at > UTC_TIMESTAMP(6) AND (?, ?, ?, ?) = (SELECT IF(IS_USED_LOCK(CONCAT('holdfast_live_', q.listener)) = q.listener, q.place, NULL), q.listener, q.lease_owner, q.ttl_micros FROM holdfast_leases_queue q WHERE q.name = holdfast_leases.name AND q.wait_until > UTC_TIMESTAMP(6) AND q.place > COALESCE(holdfast_leases.served, '') ORDER BY q.place LIMIT 1 LOCK IN SHARE MODE);

-- MariaDB: else the release (without a minimum hold) that hands a freed lease to the first live waiter whose service is alive; binds name, owner, token
INSERT INTO holdfast_leases (name, owner, token, acquired_at, expires_at, handed_to, served) SELECT s.name, IF((q.lease_owner IS NOT NULL AND q.ttl_micros IS NOT NULL AND IS_USED_LOCK(CONCAT('holdfast_live_', q.listener)) = q.listener), q.lease_owner, s.owner), s.token, UTC_TIMESTAMP(6), IF((q.lease_owner IS NOT NULL AND q.ttl_micros IS NOT NULL AND IS_USED_LOCK(CONCAT('holdfast_live_', q.listener)) = q.listener), UTC_TIMESTAMP(6) + INTERVAL q.ttl_micros MICROSECOND, s.acquired_at), IF((q.lease_owner IS NOT NULL AND q.ttl_micros IS NOT NULL AND IS_USED_LOCK(CONCAT('holdfast_live_', q.listener)) = q.listener), q.owner, NULL), q.place FROM holdfast_leases s LEFT JOIN holdfast_leases_queue q ON q.name = s.name AND q.wait_until > UTC_TIMESTAMP(6) AND q.place > COALESCE(s.served, '') WHERE s.name = ? AND s.owner = ? AND s.token = ? AND s.expires_at > UTC_TIMESTAMP(6) ORDER BY q.place LIMIT 1 FOR UPDATE ON DUPLICATE KEY UPDATE token = IF(VALUES(handed_to) IS NULL, holdfast_leases.token, holdfast_leases.token + 1), acquired_at = IF(VALUES(handed_to) IS NULL, holdfast_leases.acquired_at, VALUES(acquired_at)), owner = VALUES(owner), handed_to = COALESCE(VALUES(handed_to), holdfast_leases.handed_to), served = IF(VALUES(handed_to) IS NULL, holdfast_leases.served, VALUES(served)), broken_by = NULL, broken_at = NULL, expires_at = IF(VALUES(handed_to) IS NULL, holdfast_leases.acquired_at, VALUES(expires_at)) RETURNING token, expires_at > UTC_TIMESTAMP(6), waiters_until > UTC_TIMESTAMP(6), IF(expires_at > UTC_TIMESTAMP(6), (SELECT m.listener FROM holdfast_leases_queue m WHERE m.name = holdfast_leases.name AND m.owner = holdfast_leases.handed_to), NULL);

-- MariaDB: a waiter that gave up leaves the queue, then gives back a grant handed to it (two statements; each binds name, waiter)
DELETE FROM holdfast_leases_queue WHERE name = ? AND owner = ?;
UPDATE holdfast_leases SET expires_at = acquired_at WHERE name = ? AND handed_to = ? AND expires_at > UTC_TIMESTAMP(6);

-- MariaDB: a release that handed the lease on wakes the waiter's wake-up connection (binds its id)
KILL QUERY ?;

-- MariaDB: a wake-up connection waits for its doorbell unless a lease is handed to one of its waiters, other than those it has seen (here two; binds name, token of each, then seconds)
SELECT IF(EXISTS (SELECT 1 FROM holdfast_leases_queue q JOIN holdfast_leases l ON l.name = q.name AND l.handed_to = q.owner WHERE q.listener = CONNECTION_ID() AND q.wait_until > UTC_TIMESTAMP(6) AND l.expires_at > UTC_TIMESTAMP(6) AND (l.name, l.token) NOT IN ((?, ?), (?, ?))), 2, GET_LOCK(CONCAT('holdfast_bell_', CONNECTION_ID()), ?));

-- MariaDB: another connection of the service holds the doorbell (binds the wake-up connection's id)
SELECT GET_LOCK(CONCAT('holdfast_bell_', ?), 0);

-- MariaDB: a queued waiter for a contended name reads whether it can only wait (binds waiter, name, owner)
SELECT 1 FROM holdfast_leases l JOIN holdfast_leases_queue q ON q.name = l.name AND q.owner = ? WHERE l.name = ? AND l.expires_at > UTC_TIMESTAMP(6) AND l.owner <> ? AND NOT (l.handed_to <=> q.owner) AND q.wait_until > UTC_TIMESTAMP(6) AND l.waiters_until >= q.wait_until AND q.place > COALESCE(l.served, '');

-- MariaDB: what a wake-up connection reads when woken: the leases handed to its waiters
SELECT l.name, q.owner, l.token, l.acquired_at, l.expires_at FROM holdfast_leases_queue q JOIN holdfast_leases l ON l.name = q.name AND l.handed_to = q.owner WHERE q.listener = CONNECTION_ID() AND q.wait_until > UTC_TIMESTAMP(6) AND l.expires_at > UTC_TIMESTAMP(6);

-- MariaDB: a wake-up connection says that its service is alive
SELECT GET_LOCK(CONCAT('holdfast_live_', CONNECTION_ID()), 0), CONNECTION_ID();

-- MariaDB: a wake-up connection or doorbell holder gives its locks back before it is closed
SELECT RELEASE_ALL_LOCKS();

-- cohort hand-off: reserve a block of tokens, or renew before a hand-off (never shortening); then the row is read
UPDATE holdfast_leases SET token = token + ?, expires_at = GREATEST(expires_at, (UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)) WHERE name = ? AND owner = ? AND token = ? AND expires_at > UTC_TIMESTAMP(6);

-- cohort hand-off: the row after a reservation
SELECT token, expires_at, UTC_TIMESTAMP(6) FROM holdfast_leases WHERE name = ? AND owner = ?;

-- batching: the exclusive acquire of many leases (here two), in name order; binds name, owner, ttl micros of each
INSERT INTO holdfast_leases (name, owner, token, acquired_at, expires_at) VALUES (?, ?, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND), (?, ?, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND) ON DUPLICATE KEY UPDATE token = IF(expires_at <= UTC_TIMESTAMP(6), token + 1, token), acquired_at = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(acquired_at), IF(acquired_at = VALUES(acquired_at), acquired_at + INTERVAL 1 MICROSECOND, acquired_at)), owner = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(owner), owner), handed_to = IF(expires_at <= UTC_TIMESTAMP(6), NULL, handed_to), expires_at = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(expires_at), expires_at) RETURNING name, token, acquired_at, expires_at, owner, acquired_at = UTC_TIMESTAMP(6);

-- batching: the release of many grants (here two), rows locked in name order; binds the names, then name, owner, token of each; returns each released name and whether anyone may wait
INSERT INTO holdfast_leases (name, owner, token, acquired_at, expires_at) SELECT s.name, s.owner, s.token, s.acquired_at, s.expires_at FROM holdfast_leases s WHERE s.name IN (?, ?) AND (s.name, s.owner, s.token) IN ((?, ?, ?), (?, ?, ?)) AND s.expires_at > UTC_TIMESTAMP(6) AND (s.waiters_until IS NULL OR s.waiters_until <= UTC_TIMESTAMP(6)) ORDER BY s.name FOR UPDATE ON DUPLICATE KEY UPDATE broken_by = NULL, broken_at = NULL, expires_at = VALUES(acquired_at) RETURNING name, FALSE;

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

