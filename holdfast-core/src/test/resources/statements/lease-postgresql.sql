-- tryAcquire (exclusive)
INSERT INTO holdfast_leases AS l (name, owner, token, acquired_at, expires_at) SELECT ?, ?, GREATEST(1, n.e), n.t, n.t + ? * interval '1 microsecond' FROM (SELECT clock_timestamp() AS t, ((('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int::bigint - 1) << 40) AS e WHERE set_config('synchronous_commit', CASE WHEN current_setting('synchronous_commit') IN ('off', 'local') THEN 'on' ELSE current_setting('synchronous_commit') END, true) IS NOT NULL) n ON CONFLICT (name) DO UPDATE SET token = CASE WHEN l.expires_at <= EXCLUDED.acquired_at THEN GREATEST(l.token + 1, EXCLUDED.token) ELSE l.token END, acquired_at = CASE WHEN l.expires_at <= EXCLUDED.acquired_at THEN EXCLUDED.acquired_at ELSE l.acquired_at END, owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at WHERE l.expires_at <= EXCLUDED.acquired_at RETURNING l.token, l.acquired_at, l.expires_at;

-- tryLock (re-entrant)
INSERT INTO holdfast_leases AS l (name, owner, token, acquired_at, expires_at) SELECT ?, ?, GREATEST(1, n.e), n.t, n.t + ? * interval '1 microsecond' FROM (SELECT clock_timestamp() AS t, ((('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int::bigint - 1) << 40) AS e WHERE set_config('synchronous_commit', CASE WHEN current_setting('synchronous_commit') IN ('off', 'local') THEN 'on' ELSE current_setting('synchronous_commit') END, true) IS NOT NULL) n ON CONFLICT (name) DO UPDATE SET token = CASE WHEN l.expires_at <= EXCLUDED.acquired_at THEN GREATEST(l.token + 1, EXCLUDED.token) ELSE l.token END, acquired_at = CASE WHEN l.expires_at <= EXCLUDED.acquired_at THEN EXCLUDED.acquired_at ELSE l.acquired_at END, owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at WHERE l.expires_at <= EXCLUDED.acquired_at OR l.owner = EXCLUDED.owner RETURNING l.token, l.acquired_at, l.expires_at;

-- lock: an attempt that respects and joins the waiter queue
WITH n AS (SELECT clock_timestamp() AS t, ((('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int::bigint - 1) << 40) AS e WHERE set_config('synchronous_commit', CASE WHEN current_setting('synchronous_commit') IN ('off', 'local') THEN 'on' ELSE current_setting('synchronous_commit') END, true) IS NOT NULL), a AS (INSERT INTO holdfast_leases AS l (name, owner, token, acquired_at, expires_at) SELECT ?, ?, GREATEST(1, n.e), n.t, n.t + ? * interval '1 microsecond' FROM n ON CONFLICT (name) DO UPDATE SET token = CASE WHEN l.expires_at <= EXCLUDED.acquired_at THEN GREATEST(l.token + 1, EXCLUDED.token) ELSE l.token END, acquired_at = CASE WHEN l.expires_at <= EXCLUDED.acquired_at THEN EXCLUDED.acquired_at ELSE l.acquired_at END, owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at WHERE (l.expires_at <= EXCLUDED.acquired_at AND NOT EXISTS (SELECT 1 FROM holdfast_leases_queue q WHERE q.name = EXCLUDED.name AND q.owner <> ? AND q.wait_until > EXCLUDED.acquired_at AND q.seq < COALESCE((SELECT m.seq FROM holdfast_leases_queue m WHERE m.name = EXCLUDED.name AND m.owner = ? AND m.wait_until > EXCLUDED.acquired_at), 9223372036854775807))) RETURNING l.token, l.acquired_at, l.expires_at), d AS (DELETE FROM holdfast_leases_queue WHERE name = ? AND owner = ? AND EXISTS (SELECT 1 FROM a)), e AS (INSERT INTO holdfast_leases_queue AS w (name, owner, wait_until) SELECT ?, ?, n.t + ? * interval '1 microsecond' FROM n WHERE NOT EXISTS (SELECT 1 FROM a) ON CONFLICT (name, owner) DO UPDATE SET wait_until = EXCLUDED.wait_until, seq = CASE WHEN w.wait_until <= clock_timestamp() THEN EXCLUDED.seq ELSE w.seq END) SELECT token, acquired_at, expires_at FROM a;

-- lock: a granted waiter, or one that gave up, leaves the queue
DELETE FROM holdfast_leases_queue WHERE name = ? AND owner = ?;

-- renew
UPDATE holdfast_leases SET expires_at = clock_timestamp() + ? * interval '1 microsecond' WHERE name = ? AND owner = ? AND token = ? AND expires_at > clock_timestamp() RETURNING expires_at, set_config('synchronous_commit', CASE WHEN current_setting('synchronous_commit') IN ('off', 'local') THEN 'on' ELSE current_setting('synchronous_commit') END, true) IS NOT NULL;

-- release
UPDATE holdfast_leases AS l SET broken_by = NULL, broken_at = NULL, expires_at = acquired_at WHERE l.name = ? AND l.owner = ? AND l.token = ? AND l.expires_at > clock_timestamp() RETURNING l.token;

-- unlock (any grant of the owner), with a minimum hold
UPDATE holdfast_leases AS l SET broken_by = NULL, broken_at = NULL, expires_at = CASE WHEN (acquired_at + ? * interval '1 microsecond') > clock_timestamp() THEN (acquired_at + ? * interval '1 microsecond') ELSE acquired_at END WHERE l.name = ? AND l.owner = ? AND l.expires_at > clock_timestamp() RETURNING l.token;

-- after a release, in the same round trip: wake the first waiter
SELECT (SELECT pg_notify('holdfast_lease_holdfast_leases', length(h.name) || ':' || h.name || h.owner) IS NULL FROM (SELECT q.name, q.owner FROM holdfast_leases_queue q WHERE q.name = ? AND q.wait_until > clock_timestamp() ORDER BY q.seq LIMIT 1) h WHERE EXISTS (SELECT 1 FROM holdfast_leases f WHERE f.name = h.name AND f.expires_at <= clock_timestamp()));

-- after a fast release: wake, and skip the WAL flush if nobody waits
SELECT (SELECT pg_notify('holdfast_lease_holdfast_leases', length(h.name) || ':' || h.name || h.owner) IS NULL FROM (SELECT q.name, q.owner FROM holdfast_leases_queue q WHERE q.name = ? AND q.wait_until > clock_timestamp() ORDER BY q.seq LIMIT 1) h WHERE EXISTS (SELECT 1 FROM holdfast_leases f WHERE f.name = h.name AND f.expires_at <= clock_timestamp())), set_config('synchronous_commit', CASE WHEN EXISTS (SELECT 1 FROM holdfast_leases_queue w WHERE w.name = ? AND w.wait_until > clock_timestamp()) THEN current_setting('synchronous_commit') ELSE 'off' END, true);

-- find
SELECT name, owner, token, acquired_at, expires_at FROM holdfast_leases WHERE name = ?;

-- diagnosing a refused release or renewal: the row and who broke it
SELECT name, owner, token, acquired_at, expires_at, broken_by, broken_at FROM holdfast_leases WHERE name = ?;

-- list (operators)
SELECT name, owner, token, acquired_at, expires_at FROM holdfast_leases WHERE expires_at > clock_timestamp() ORDER BY name;

-- forceRelease (operators)
UPDATE holdfast_leases AS l SET broken_by = ?, broken_at = clock_timestamp(), expires_at = l.acquired_at WHERE l.name = ? AND l.expires_at > clock_timestamp() RETURNING l.token;

