-- tryLock, relaxed commit
SELECT lock_id, lock_owner, acquired_at, expires_at FROM FINAL TABLE (MERGE INTO holdfast_locks t USING (SELECT CAST(? AS VARCHAR) lock_type, CAST(? AS VARCHAR) resource_id, CAST(? AS VARCHAR) lock_id, CAST(? AS VARCHAR) lock_owner, CAST(? AS BIGINT) micros, HOLDFAST_CLOCK_TIMESTAMP() clock_now) s ON t.lock_type = s.lock_type AND t.resource_id = s.resource_id WHEN MATCHED THEN UPDATE SET ended_lock_id = CASE WHEN t.expires_at <= s.clock_now AND t.lock_id IS NOT NULL THEN t.lock_id ELSE t.ended_lock_id END, ended_owner = CASE WHEN t.expires_at <= s.clock_now AND t.lock_id IS NOT NULL THEN t.lock_owner ELSE t.ended_owner END, ended_reason = CASE WHEN t.expires_at <= s.clock_now AND t.lock_id IS NOT NULL THEN 'EXPIRED' ELSE t.ended_reason END, ended_by = CASE WHEN t.expires_at <= s.clock_now AND t.lock_id IS NOT NULL THEN NULL ELSE t.ended_by END, ended_at = CASE WHEN t.expires_at <= s.clock_now AND t.lock_id IS NOT NULL THEN t.expires_at ELSE t.ended_at END, lock_id = CASE WHEN t.expires_at <= s.clock_now THEN s.lock_id ELSE t.lock_id END, lock_owner = CASE WHEN t.expires_at <= s.clock_now THEN s.lock_owner ELSE t.lock_owner END, acquired_at = CASE WHEN t.expires_at <= s.clock_now THEN s.clock_now ELSE t.acquired_at END, expires_at = CASE WHEN t.expires_at <= s.clock_now THEN DATEADD(MICROSECOND, s.micros, s.clock_now) ELSE t.expires_at END WHEN NOT MATCHED THEN INSERT (lock_type, resource_id, lock_id, lock_owner, acquired_at, expires_at) VALUES (s.lock_type, s.resource_id, s.lock_id, s.lock_owner, s.clock_now, DATEADD(MICROSECOND, s.micros, s.clock_now)));

-- tryLock, durable commit
SELECT lock_id, lock_owner, acquired_at, expires_at FROM FINAL TABLE (MERGE INTO holdfast_locks t USING (SELECT CAST(? AS VARCHAR) lock_type, CAST(? AS VARCHAR) resource_id, CAST(? AS VARCHAR) lock_id, CAST(? AS VARCHAR) lock_owner, CAST(? AS BIGINT) micros, HOLDFAST_CLOCK_TIMESTAMP() clock_now) s ON t.lock_type = s.lock_type AND t.resource_id = s.resource_id WHEN MATCHED THEN UPDATE SET ended_lock_id = CASE WHEN t.expires_at <= s.clock_now AND t.lock_id IS NOT NULL THEN t.lock_id ELSE t.ended_lock_id END, ended_owner = CASE WHEN t.expires_at <= s.clock_now AND t.lock_id IS NOT NULL THEN t.lock_owner ELSE t.ended_owner END, ended_reason = CASE WHEN t.expires_at <= s.clock_now AND t.lock_id IS NOT NULL THEN 'EXPIRED' ELSE t.ended_reason END, ended_by = CASE WHEN t.expires_at <= s.clock_now AND t.lock_id IS NOT NULL THEN NULL ELSE t.ended_by END, ended_at = CASE WHEN t.expires_at <= s.clock_now AND t.lock_id IS NOT NULL THEN t.expires_at ELSE t.ended_at END, lock_id = CASE WHEN t.expires_at <= s.clock_now THEN s.lock_id ELSE t.lock_id END, lock_owner = CASE WHEN t.expires_at <= s.clock_now THEN s.lock_owner ELSE t.lock_owner END, acquired_at = CASE WHEN t.expires_at <= s.clock_now THEN s.clock_now ELSE t.acquired_at END, expires_at = CASE WHEN t.expires_at <= s.clock_now THEN DATEADD(MICROSECOND, s.micros, s.clock_now) ELSE t.expires_at END WHEN NOT MATCHED THEN INSERT (lock_type, resource_id, lock_id, lock_owner, acquired_at, expires_at) VALUES (s.lock_type, s.resource_id, s.lock_id, s.lock_owner, s.clock_now, DATEADD(MICROSECOND, s.micros, s.clock_now)));

-- reacquire: a new id for the owner's live lock, relaxed
UPDATE holdfast_locks SET ended_lock_id = lock_id, ended_owner = lock_owner, ended_reason = 'REPLACED', ended_by = lock_owner, ended_at = HOLDFAST_CLOCK_TIMESTAMP(), lock_id = ?, acquired_at = HOLDFAST_CLOCK_TIMESTAMP(), expires_at = DATEADD(MICROSECOND, CAST(? AS BIGINT), HOLDFAST_CLOCK_TIMESTAMP()) WHERE lock_type = ? AND resource_id = ? AND lock_owner = ? AND lock_id IS NOT NULL AND expires_at > HOLDFAST_CLOCK_TIMESTAMP();

-- reacquire, durable
UPDATE holdfast_locks SET ended_lock_id = lock_id, ended_owner = lock_owner, ended_reason = 'REPLACED', ended_by = lock_owner, ended_at = HOLDFAST_CLOCK_TIMESTAMP(), lock_id = ?, acquired_at = HOLDFAST_CLOCK_TIMESTAMP(), expires_at = DATEADD(MICROSECOND, CAST(? AS BIGINT), HOLDFAST_CLOCK_TIMESTAMP()) WHERE lock_type = ? AND resource_id = ? AND lock_owner = ? AND lock_id IS NOT NULL AND expires_at > HOLDFAST_CLOCK_TIMESTAMP();

-- checkLock
SELECT lock_type, resource_id, lock_owner, acquired_at, expires_at, CASE WHEN expires_at > HOLDFAST_CLOCK_TIMESTAMP() THEN 1 ELSE 0 END FROM holdfast_locks WHERE lock_id = ?;

-- checkLock: how an id that no row holds ended
SELECT lock_type, resource_id, ended_owner, ended_reason, ended_by, ended_at, lock_owner, acquired_at, expires_at, CASE WHEN lock_id IS NOT NULL AND expires_at > HOLDFAST_CLOCK_TIMESTAMP() THEN 1 ELSE 0 END FROM holdfast_locks WHERE ended_lock_id = ?;

-- releaseLock, relaxed
UPDATE holdfast_locks SET ended_lock_id = lock_id, ended_owner = lock_owner, ended_reason = 'RELEASED', ended_by = lock_owner, ended_at = HOLDFAST_CLOCK_TIMESTAMP(), lock_id = NULL, expires_at = TIMESTAMP WITH TIME ZONE '2000-01-01 00:00:00+00' WHERE lock_id = ? AND expires_at > HOLDFAST_CLOCK_TIMESTAMP();

-- releaseLock with owner, durable
UPDATE holdfast_locks SET ended_lock_id = lock_id, ended_owner = lock_owner, ended_reason = 'RELEASED', ended_by = lock_owner, ended_at = HOLDFAST_CLOCK_TIMESTAMP(), lock_id = NULL, expires_at = TIMESTAMP WITH TIME ZONE '2000-01-01 00:00:00+00' WHERE lock_id = ? AND expires_at > HOLDFAST_CLOCK_TIMESTAMP() AND lock_owner = ?;

-- extendLockExpiration
UPDATE holdfast_locks SET expires_at = LEAST(DATEADD(MICROSECOND, CAST(? AS BIGINT), expires_at), DATEADD(MICROSECOND, CAST(? AS BIGINT), HOLDFAST_CLOCK_TIMESTAMP())) WHERE lock_id = ? AND expires_at > HOLDFAST_CLOCK_TIMESTAMP();

-- extendLockExpiration with owner
UPDATE holdfast_locks SET expires_at = LEAST(DATEADD(MICROSECOND, CAST(? AS BIGINT), expires_at), DATEADD(MICROSECOND, CAST(? AS BIGINT), HOLDFAST_CLOCK_TIMESTAMP())) WHERE lock_id = ? AND expires_at > HOLDFAST_CLOCK_TIMESTAMP() AND lock_owner = ?;

-- holder (operators)
SELECT lock_type, resource_id, lock_owner, acquired_at, expires_at FROM holdfast_locks WHERE lock_type = ? AND resource_id = ? AND lock_id IS NOT NULL AND expires_at > HOLDFAST_CLOCK_TIMESTAMP();

-- heldLocks by type and owner (operators)
SELECT lock_type, resource_id, lock_owner, acquired_at, expires_at FROM holdfast_locks WHERE lock_id IS NOT NULL AND expires_at > CURRENT_TIMESTAMP AND lock_type = ? AND lock_owner = ? ORDER BY expires_at, lock_type, resource_id FETCH FIRST ? ROWS ONLY;

-- heldLocks, all (operators)
SELECT lock_type, resource_id, lock_owner, acquired_at, expires_at FROM holdfast_locks WHERE lock_id IS NOT NULL AND expires_at > CURRENT_TIMESTAMP ORDER BY expires_at, lock_type, resource_id FETCH FIRST ? ROWS ONLY;

-- heldLocksAfter by type and owner, a later page (operators)
SELECT lock_type, resource_id, lock_owner, acquired_at, expires_at FROM holdfast_locks WHERE lock_id IS NOT NULL AND expires_at > CURRENT_TIMESTAMP AND lock_type = ? AND lock_owner = ? AND (lock_type > ? OR (lock_type = ? AND resource_id > ?)) ORDER BY lock_type, resource_id FETCH FIRST ? ROWS ONLY;

-- heldLocksAfter, all, the first page (operators)
SELECT lock_type, resource_id, lock_owner, acquired_at, expires_at FROM holdfast_locks WHERE lock_id IS NOT NULL AND expires_at > CURRENT_TIMESTAMP ORDER BY lock_type, resource_id FETCH FIRST ? ROWS ONLY;

-- forceRelease (operators)
UPDATE holdfast_locks SET ended_lock_id = lock_id, ended_owner = lock_owner, ended_reason = 'BROKEN', ended_by = CAST(? AS VARCHAR), ended_at = HOLDFAST_CLOCK_TIMESTAMP(), lock_id = NULL, expires_at = TIMESTAMP WITH TIME ZONE '2000-01-01 00:00:00+00' WHERE lock_type = ? AND resource_id = ? AND lock_id IS NOT NULL AND expires_at > HOLDFAST_CLOCK_TIMESTAMP();

-- purgeExpired (operators)
DELETE FROM holdfast_locks WHERE expires_at <= CURRENT_TIMESTAMP FETCH FIRST ? ROWS ONLY;

