-- tryLock, relaxed commit
INSERT INTO holdfast_locks AS l (lock_type, resource_id, lock_id, lock_owner, acquired_at, expires_at) SELECT ?, ?, ?, ?, c.now, c.now + ? * interval '1 microsecond' FROM (SELECT clock_timestamp() AS now) c WHERE set_config('synchronous_commit', 'off', true) = 'off' ON CONFLICT (lock_type, resource_id) DO UPDATE SET ended_lock_id = CASE WHEN l.expires_at <= EXCLUDED.acquired_at AND l.lock_id IS NOT NULL THEN l.lock_id ELSE l.ended_lock_id END, ended_owner = CASE WHEN l.expires_at <= EXCLUDED.acquired_at AND l.lock_id IS NOT NULL THEN l.lock_owner ELSE l.ended_owner END, ended_reason = CASE WHEN l.expires_at <= EXCLUDED.acquired_at AND l.lock_id IS NOT NULL THEN 'EXPIRED' ELSE l.ended_reason END, ended_by = CASE WHEN l.expires_at <= EXCLUDED.acquired_at AND l.lock_id IS NOT NULL THEN NULL ELSE l.ended_by END, ended_at = CASE WHEN l.expires_at <= EXCLUDED.acquired_at AND l.lock_id IS NOT NULL THEN l.expires_at ELSE l.ended_at END, lock_id = CASE WHEN l.expires_at <= EXCLUDED.acquired_at THEN EXCLUDED.lock_id ELSE l.lock_id END, lock_owner = CASE WHEN l.expires_at <= EXCLUDED.acquired_at THEN EXCLUDED.lock_owner ELSE l.lock_owner END, acquired_at = CASE WHEN l.expires_at <= EXCLUDED.acquired_at THEN EXCLUDED.acquired_at ELSE l.acquired_at END, expires_at = CASE WHEN l.expires_at <= EXCLUDED.acquired_at THEN EXCLUDED.expires_at ELSE l.expires_at END RETURNING lock_id, lock_owner, acquired_at, expires_at;

-- tryLock, durable commit
INSERT INTO holdfast_locks AS l (lock_type, resource_id, lock_id, lock_owner, acquired_at, expires_at) SELECT ?, ?, ?, ?, c.now, c.now + ? * interval '1 microsecond' FROM (SELECT clock_timestamp() AS now) c WHERE set_config('synchronous_commit', CASE WHEN current_setting('synchronous_commit') IN ('off', 'local') THEN 'on' ELSE current_setting('synchronous_commit') END, true) IS NOT NULL ON CONFLICT (lock_type, resource_id) DO UPDATE SET ended_lock_id = CASE WHEN l.expires_at <= EXCLUDED.acquired_at AND l.lock_id IS NOT NULL THEN l.lock_id ELSE l.ended_lock_id END, ended_owner = CASE WHEN l.expires_at <= EXCLUDED.acquired_at AND l.lock_id IS NOT NULL THEN l.lock_owner ELSE l.ended_owner END, ended_reason = CASE WHEN l.expires_at <= EXCLUDED.acquired_at AND l.lock_id IS NOT NULL THEN 'EXPIRED' ELSE l.ended_reason END, ended_by = CASE WHEN l.expires_at <= EXCLUDED.acquired_at AND l.lock_id IS NOT NULL THEN NULL ELSE l.ended_by END, ended_at = CASE WHEN l.expires_at <= EXCLUDED.acquired_at AND l.lock_id IS NOT NULL THEN l.expires_at ELSE l.ended_at END, lock_id = CASE WHEN l.expires_at <= EXCLUDED.acquired_at THEN EXCLUDED.lock_id ELSE l.lock_id END, lock_owner = CASE WHEN l.expires_at <= EXCLUDED.acquired_at THEN EXCLUDED.lock_owner ELSE l.lock_owner END, acquired_at = CASE WHEN l.expires_at <= EXCLUDED.acquired_at THEN EXCLUDED.acquired_at ELSE l.acquired_at END, expires_at = CASE WHEN l.expires_at <= EXCLUDED.acquired_at THEN EXCLUDED.expires_at ELSE l.expires_at END RETURNING lock_id, lock_owner, acquired_at, expires_at;

-- reacquire: a new id for the owner's live lock, relaxed
UPDATE holdfast_locks AS l SET ended_lock_id = lock_id, ended_owner = lock_owner, ended_reason = 'REPLACED', ended_by = lock_owner, ended_at = c.now, lock_id = ?, acquired_at = c.now, expires_at = c.now + ? * interval '1 microsecond' FROM (SELECT clock_timestamp() AS now) c WHERE l.lock_type = ? AND l.resource_id = ? AND l.lock_owner = ? AND l.lock_id IS NOT NULL AND l.expires_at > c.now AND set_config('synchronous_commit', 'off', true) = 'off';

-- reacquire, durable
UPDATE holdfast_locks AS l SET ended_lock_id = lock_id, ended_owner = lock_owner, ended_reason = 'REPLACED', ended_by = lock_owner, ended_at = c.now, lock_id = ?, acquired_at = c.now, expires_at = c.now + ? * interval '1 microsecond' FROM (SELECT clock_timestamp() AS now) c WHERE l.lock_type = ? AND l.resource_id = ? AND l.lock_owner = ? AND l.lock_id IS NOT NULL AND l.expires_at > c.now AND set_config('synchronous_commit', CASE WHEN current_setting('synchronous_commit') IN ('off', 'local') THEN 'on' ELSE current_setting('synchronous_commit') END, true) IS NOT NULL;

-- checkLock
SELECT lock_type, resource_id, lock_owner, acquired_at, expires_at, CASE WHEN expires_at > clock_timestamp() THEN 1 ELSE 0 END FROM holdfast_locks WHERE lock_id = ?;

-- checkLock: how an id that no row holds ended
SELECT lock_type, resource_id, ended_owner, ended_reason, ended_by, ended_at, lock_owner, acquired_at, expires_at, CASE WHEN lock_id IS NOT NULL AND expires_at > clock_timestamp() THEN 1 ELSE 0 END FROM holdfast_locks WHERE ended_lock_id = ?;

-- releaseLock, relaxed
UPDATE holdfast_locks SET ended_lock_id = lock_id, ended_owner = lock_owner, ended_reason = 'RELEASED', ended_by = lock_owner, ended_at = clock_timestamp(), lock_id = NULL, expires_at = TIMESTAMPTZ '2000-01-01 00:00:00+00' WHERE lock_id = ? AND expires_at > clock_timestamp() AND set_config('synchronous_commit', 'off', true) = 'off';

-- releaseLock with owner, durable
UPDATE holdfast_locks SET ended_lock_id = lock_id, ended_owner = lock_owner, ended_reason = 'RELEASED', ended_by = lock_owner, ended_at = clock_timestamp(), lock_id = NULL, expires_at = TIMESTAMPTZ '2000-01-01 00:00:00+00' WHERE lock_id = ? AND expires_at > clock_timestamp() AND lock_owner = ? AND set_config('synchronous_commit', CASE WHEN current_setting('synchronous_commit') IN ('off', 'local') THEN 'on' ELSE current_setting('synchronous_commit') END, true) IS NOT NULL;

-- extendLockExpiration
UPDATE holdfast_locks SET expires_at = LEAST(expires_at + ? * interval '1 microsecond', clock_timestamp() + ? * interval '1 microsecond') WHERE lock_id = ? AND expires_at > clock_timestamp() AND set_config('synchronous_commit', CASE WHEN current_setting('synchronous_commit') IN ('off', 'local') THEN 'on' ELSE current_setting('synchronous_commit') END, true) IS NOT NULL;

-- extendLockExpiration with owner
UPDATE holdfast_locks SET expires_at = LEAST(expires_at + ? * interval '1 microsecond', clock_timestamp() + ? * interval '1 microsecond') WHERE lock_id = ? AND expires_at > clock_timestamp() AND lock_owner = ? AND set_config('synchronous_commit', CASE WHEN current_setting('synchronous_commit') IN ('off', 'local') THEN 'on' ELSE current_setting('synchronous_commit') END, true) IS NOT NULL;

-- holder (operators)
SELECT lock_type, resource_id, lock_owner, acquired_at, expires_at FROM holdfast_locks WHERE lock_type = ? AND resource_id = ? AND lock_id IS NOT NULL AND expires_at > clock_timestamp();

-- heldLocks by type and owner (operators)
SELECT lock_type, resource_id, lock_owner, acquired_at, expires_at FROM holdfast_locks WHERE lock_id IS NOT NULL AND expires_at > statement_timestamp() AND lock_type = ? AND lock_owner = ? ORDER BY expires_at, lock_type, resource_id LIMIT ?;

-- heldLocks, all (operators)
SELECT lock_type, resource_id, lock_owner, acquired_at, expires_at FROM holdfast_locks WHERE lock_id IS NOT NULL AND expires_at > statement_timestamp() ORDER BY expires_at, lock_type, resource_id LIMIT ?;

-- heldLocksAfter by type and owner, a later page (operators)
SELECT lock_type, resource_id, lock_owner, acquired_at, expires_at FROM holdfast_locks WHERE lock_id IS NOT NULL AND expires_at > statement_timestamp() AND lock_type = ? AND lock_owner = ? AND (lock_type > ? OR (lock_type = ? AND resource_id > ?)) ORDER BY lock_type, resource_id LIMIT ?;

-- heldLocksAfter, all, the first page (operators)
SELECT lock_type, resource_id, lock_owner, acquired_at, expires_at FROM holdfast_locks WHERE lock_id IS NOT NULL AND expires_at > statement_timestamp() ORDER BY lock_type, resource_id LIMIT ?;

-- forceRelease (operators)
UPDATE holdfast_locks SET ended_lock_id = lock_id, ended_owner = lock_owner, ended_reason = 'BROKEN', ended_by = ?, ended_at = clock_timestamp(), lock_id = NULL, expires_at = TIMESTAMPTZ '2000-01-01 00:00:00+00' WHERE lock_type = ? AND resource_id = ? AND lock_id IS NOT NULL AND expires_at > clock_timestamp() AND set_config('synchronous_commit', CASE WHEN current_setting('synchronous_commit') IN ('off', 'local') THEN 'on' ELSE current_setting('synchronous_commit') END, true) IS NOT NULL;

-- purgeExpired (operators)
WITH batch AS (SELECT lock_type, resource_id FROM holdfast_locks WHERE expires_at <= statement_timestamp() LIMIT ? FOR UPDATE SKIP LOCKED) DELETE FROM holdfast_locks t USING batch WHERE t.lock_type = batch.lock_type AND t.resource_id = batch.resource_id AND t.expires_at <= statement_timestamp();

