-- tryAcquire (exclusive)
SELECT token, acquired_at, expires_at FROM FINAL TABLE (MERGE INTO holdfast_leases t USING (SELECT CAST(? AS VARCHAR) AS name, CAST(? AS VARCHAR) AS owner, HOLDFAST_CLOCK_TIMESTAMP() AS now, CAST(? AS BIGINT) AS ttl) s ON t.name = s.name WHEN MATCHED AND t.expires_at <= s.now THEN UPDATE SET token = CASE WHEN t.expires_at <= s.now THEN t.token + 1 ELSE t.token END, acquired_at = CASE WHEN t.expires_at <= s.now THEN s.now ELSE t.acquired_at END, owner = s.owner, expires_at = DATEADD(MICROSECOND, s.ttl, s.now) WHEN NOT MATCHED THEN INSERT (name, owner, token, acquired_at, expires_at) VALUES (s.name, s.owner, 1, s.now, DATEADD(MICROSECOND, s.ttl, s.now)));

-- tryLock (re-entrant)
SELECT token, acquired_at, expires_at FROM FINAL TABLE (MERGE INTO holdfast_leases t USING (SELECT CAST(? AS VARCHAR) AS name, CAST(? AS VARCHAR) AS owner, HOLDFAST_CLOCK_TIMESTAMP() AS now, CAST(? AS BIGINT) AS ttl) s ON t.name = s.name WHEN MATCHED AND (t.expires_at <= s.now OR t.owner = s.owner) THEN UPDATE SET token = CASE WHEN t.expires_at <= s.now THEN t.token + 1 ELSE t.token END, acquired_at = CASE WHEN t.expires_at <= s.now THEN s.now ELSE t.acquired_at END, owner = s.owner, expires_at = DATEADD(MICROSECOND, s.ttl, s.now) WHEN NOT MATCHED THEN INSERT (name, owner, token, acquired_at, expires_at) VALUES (s.name, s.owner, 1, s.now, DATEADD(MICROSECOND, s.ttl, s.now)));

-- renew
SELECT expires_at FROM FINAL TABLE (UPDATE holdfast_leases SET expires_at = DATEADD(MICROSECOND, CAST(? AS BIGINT), HOLDFAST_CLOCK_TIMESTAMP()) WHERE name = ? AND owner = ? AND token = ? AND expires_at > HOLDFAST_CLOCK_TIMESTAMP());

-- the expiry a release sets
acquired_at;

-- the expiry a release with a minimum hold sets
CASE WHEN DATEADD(MICROSECOND, CAST(? AS BIGINT), acquired_at) > HOLDFAST_CLOCK_TIMESTAMP() THEN DATEADD(MICROSECOND, CAST(? AS BIGINT), acquired_at) ELSE acquired_at END;

