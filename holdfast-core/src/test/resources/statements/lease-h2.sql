-- tryAcquire (exclusive)
SELECT token, acquired_at, expires_at FROM FINAL TABLE (MERGE INTO holdfast_leases t USING (SELECT CAST(? AS VARCHAR) AS name, CAST(? AS VARCHAR) AS owner, HOLDFAST_CLOCK_TIMESTAMP() AS now, CAST(? AS BIGINT) AS ttl) s ON t.name = s.name WHEN MATCHED AND t.expires_at <= s.now THEN UPDATE SET token = t.token + 1, acquired_at = s.now, owner = s.owner, expires_at = DATEADD(MICROSECOND, s.ttl, s.now) WHEN NOT MATCHED THEN INSERT (name, owner, token, acquired_at, expires_at) VALUES (s.name, s.owner, 1, s.now, DATEADD(MICROSECOND, s.ttl, s.now)));

-- tryLock (re-entrant)
SELECT token, acquired_at, expires_at FROM FINAL TABLE (MERGE INTO holdfast_leases t USING (SELECT CAST(? AS VARCHAR) AS name, CAST(? AS VARCHAR) AS owner, HOLDFAST_CLOCK_TIMESTAMP() AS now, CAST(? AS BIGINT) AS ttl) s ON t.name = s.name WHEN MATCHED AND (t.expires_at <= s.now OR t.owner = s.owner) THEN UPDATE SET token = CASE WHEN t.expires_at <= s.now THEN t.token + 1 ELSE t.token END, acquired_at = CASE WHEN t.expires_at <= s.now THEN s.now ELSE t.acquired_at END, owner = s.owner, expires_at = GREATEST(DATEADD(MICROSECOND, s.ttl, s.now), t.acquired_at) WHEN NOT MATCHED THEN INSERT (name, owner, token, acquired_at, expires_at) VALUES (s.name, s.owner, 1, s.now, DATEADD(MICROSECOND, s.ttl, s.now)));

-- lock: an attempt that refuses while an earlier live waiter is queued; binds then [<waiter>]
SELECT token, acquired_at, expires_at FROM FINAL TABLE (MERGE INTO holdfast_leases t USING (SELECT CAST(? AS VARCHAR) AS name, CAST(? AS VARCHAR) AS owner, HOLDFAST_CLOCK_TIMESTAMP() AS now, CAST(? AS BIGINT) AS ttl, CAST(? AS VARCHAR) AS waiter) s ON t.name = s.name WHEN MATCHED AND t.expires_at <= s.now AND NOT EXISTS (SELECT 1 FROM holdfast_leases_queue q WHERE q.name = s.name AND q.owner <> s.waiter AND q.wait_until > s.now AND q.queued_at < COALESCE((SELECT m.queued_at FROM holdfast_leases_queue m WHERE m.name = s.name AND m.owner = s.waiter AND m.wait_until > s.now), TIMESTAMP WITH TIME ZONE '9999-12-31 00:00:00+00')) THEN UPDATE SET token = t.token + 1, acquired_at = s.now, owner = s.owner, expires_at = DATEADD(MICROSECOND, s.ttl, s.now) WHEN NOT MATCHED THEN INSERT (name, owner, token, acquired_at, expires_at) VALUES (s.name, s.owner, 1, s.now, DATEADD(MICROSECOND, s.ttl, s.now)));

-- lock: a refused attempt joins the queue or refreshes its entry
MERGE INTO holdfast_leases_queue q USING (SELECT CAST(? AS VARCHAR) AS name, CAST(? AS VARCHAR) AS owner, HOLDFAST_CLOCK_TIMESTAMP() AS now, CAST(? AS BIGINT) AS micros) s ON q.name = s.name AND q.owner = s.owner WHEN MATCHED THEN UPDATE SET queued_at = CASE WHEN q.wait_until <= s.now THEN s.now ELSE q.queued_at END, wait_until = DATEADD(MICROSECOND, s.micros, s.now) WHEN NOT MATCHED THEN INSERT (name, owner, queued_at, wait_until) VALUES (s.name, s.owner, s.now, DATEADD(MICROSECOND, s.micros, s.now));

-- lock: a granted waiter leaves the queue
DELETE FROM holdfast_leases_queue WHERE name = ? AND owner = ?;

-- lock: a waiter that gave up leaves the queue (binds [<name>, <waiter>])
DELETE FROM holdfast_leases_queue WHERE name = ? AND owner = ?;

-- renew
SELECT expires_at FROM FINAL TABLE (UPDATE holdfast_leases SET expires_at = DATEADD(MICROSECOND, CAST(? AS BIGINT), HOLDFAST_CLOCK_TIMESTAMP()) WHERE name = ? AND owner = ? AND token = ? AND expires_at > HOLDFAST_CLOCK_TIMESTAMP());

-- release
UPDATE holdfast_leases SET broken_by = NULL, broken_at = NULL, expires_at = acquired_at WHERE name = ? AND owner = ? AND token = ? AND expires_at > HOLDFAST_CLOCK_TIMESTAMP();

-- unlock (any grant of the owner), with a minimum hold
UPDATE holdfast_leases SET broken_by = NULL, broken_at = NULL, expires_at = CASE WHEN DATEADD(MICROSECOND, CAST(? AS BIGINT), acquired_at) > HOLDFAST_CLOCK_TIMESTAMP() THEN DATEADD(MICROSECOND, CAST(? AS BIGINT), acquired_at) ELSE acquired_at END WHERE name = ? AND owner = ? AND expires_at > HOLDFAST_CLOCK_TIMESTAMP();

-- cohort hand-off: reserve a block of tokens, or renew before a hand-off (never shortening)
SELECT token, expires_at, HOLDFAST_CLOCK_TIMESTAMP() FROM FINAL TABLE (UPDATE holdfast_leases SET token = token + ?, expires_at = GREATEST(expires_at, DATEADD(MICROSECOND, CAST(? AS BIGINT), HOLDFAST_CLOCK_TIMESTAMP())) WHERE name = ? AND owner = ? AND token = ? AND expires_at > HOLDFAST_CLOCK_TIMESTAMP());

-- find
SELECT name, owner, token, acquired_at, expires_at FROM holdfast_leases WHERE name = ?;

-- diagnosing a refused release or renewal: the row and who broke it
SELECT name, owner, token, acquired_at, expires_at, broken_by, broken_at FROM holdfast_leases WHERE name = ?;

-- lock: the bound ran out: who holds the lease, and how many live waiters queued ahead (binds [<name>, <waiter>, <name>, <waiter>, <name>])
SELECT l.owner, l.token, l.acquired_at, l.expires_at, n.t, (SELECT COUNT(*) FROM holdfast_leases_queue q WHERE q.name = ? AND q.owner <> ? AND q.wait_until > n.t AND q.queued_at < COALESCE((SELECT m.queued_at FROM holdfast_leases_queue m WHERE m.name = ? AND m.owner = ? AND m.wait_until > n.t), TIMESTAMP WITH TIME ZONE '9999-12-31 00:00:00+00')) FROM (SELECT HOLDFAST_CLOCK_TIMESTAMP() AS t) n LEFT JOIN holdfast_leases l ON l.name = ? AND l.expires_at > n.t;

-- list (operators)
SELECT name, owner, token, acquired_at, expires_at FROM holdfast_leases WHERE expires_at > HOLDFAST_CLOCK_TIMESTAMP() ORDER BY name;

-- LeaseView.live: a later page (operators)
SELECT name, owner, token, acquired_at, expires_at FROM holdfast_leases WHERE expires_at > HOLDFAST_CLOCK_TIMESTAMP() AND name > ? ORDER BY name LIMIT ?;

-- LeaseView.waiters: all, the first page (operators)
SELECT name, place, lease_owner, queued_at, wait_until FROM (SELECT name, ROW_NUMBER() OVER (PARTITION BY name ORDER BY queued_at, owner) AS place, CAST(NULL AS VARCHAR(200)) AS lease_owner, queued_at, wait_until FROM holdfast_leases_queue WHERE wait_until > HOLDFAST_CLOCK_TIMESTAMP()) q ORDER BY name, place LIMIT ?;

-- LeaseView.waiters of one name, a later page (operators)
SELECT name, place, lease_owner, queued_at, wait_until FROM (SELECT name, ROW_NUMBER() OVER (PARTITION BY name ORDER BY queued_at, owner) AS place, CAST(NULL AS VARCHAR(200)) AS lease_owner, queued_at, wait_until FROM holdfast_leases_queue WHERE wait_until > HOLDFAST_CLOCK_TIMESTAMP() AND name = ?) q WHERE (name > ? OR (name = ? AND place > ?)) ORDER BY name, place LIMIT ?;

-- forceRelease (operators)
UPDATE holdfast_leases SET broken_by = ?, broken_at = HOLDFAST_CLOCK_TIMESTAMP(), expires_at = acquired_at WHERE name = ? AND expires_at > HOLDFAST_CLOCK_TIMESTAMP();

