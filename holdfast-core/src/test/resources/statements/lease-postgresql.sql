-- tryAcquire (exclusive)
INSERT INTO holdfast_leases AS l (name, owner, token, acquired_at, expires_at) SELECT ?, ?, GREATEST(1, n.e), n.t, n.t + ? * interval '1 microsecond' FROM (SELECT clock_timestamp() AS t, ((('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int::bigint - 1) << 40) AS e WHERE set_config('synchronous_commit', CASE WHEN current_setting('synchronous_commit') IN ('off', 'local') THEN 'on' ELSE current_setting('synchronous_commit') END, true) IS NOT NULL) n ON CONFLICT (name) DO UPDATE SET token = CASE WHEN l.expires_at <= EXCLUDED.acquired_at THEN GREATEST(l.token + 1, EXCLUDED.token) ELSE l.token END, acquired_at = CASE WHEN l.expires_at <= EXCLUDED.acquired_at THEN EXCLUDED.acquired_at ELSE l.acquired_at END, owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at WHERE l.expires_at <= EXCLUDED.acquired_at RETURNING l.token, l.acquired_at, l.expires_at;

-- tryLock (re-entrant)
INSERT INTO holdfast_leases AS l (name, owner, token, acquired_at, expires_at) SELECT ?, ?, GREATEST(1, n.e), n.t, n.t + ? * interval '1 microsecond' FROM (SELECT clock_timestamp() AS t, ((('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int::bigint - 1) << 40) AS e WHERE set_config('synchronous_commit', CASE WHEN current_setting('synchronous_commit') IN ('off', 'local') THEN 'on' ELSE current_setting('synchronous_commit') END, true) IS NOT NULL) n ON CONFLICT (name) DO UPDATE SET token = CASE WHEN l.expires_at <= EXCLUDED.acquired_at THEN GREATEST(l.token + 1, EXCLUDED.token) ELSE l.token END, acquired_at = CASE WHEN l.expires_at <= EXCLUDED.acquired_at THEN EXCLUDED.acquired_at ELSE l.acquired_at END, owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at WHERE l.expires_at <= EXCLUDED.acquired_at OR l.owner = EXCLUDED.owner RETURNING l.token, l.acquired_at, l.expires_at;

-- renew
UPDATE holdfast_leases SET expires_at = clock_timestamp() + ? * interval '1 microsecond' WHERE name = ? AND owner = ? AND token = ? AND expires_at > clock_timestamp() RETURNING expires_at, set_config('synchronous_commit', CASE WHEN current_setting('synchronous_commit') IN ('off', 'local') THEN 'on' ELSE current_setting('synchronous_commit') END, true) IS NOT NULL;

-- the expiry a release sets
acquired_at;

-- the expiry a release with a minimum hold sets
CASE WHEN (acquired_at + ? * interval '1 microsecond') > clock_timestamp() THEN (acquired_at + ? * interval '1 microsecond') ELSE acquired_at END;

