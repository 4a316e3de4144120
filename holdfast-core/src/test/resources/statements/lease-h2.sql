-- tryAcquire (exclusive)
SELECT token, acquired_at, expires_at FROM FINAL TABLE (MERGE INTO holdfast_leases t USING (SELECT CAST(? AS VARCHAR) AS name, CAST(? AS VARCHAR) AS owner, HOLDFAST_CLOCK_TIMESTAMP() AS now, CAST(? AS BIGINT) AS ttl) s ON t.name = s.name WHEN MATCHED AND t.expires_at <= s.now THEN UPDATE SET token = CASE WHEN t.expires_at <= s.now THEN t.token + 1 ELSE t.token END, acquired_at = CASE WHEN t.expires_at <= s.now THEN s.now ELSE t.acquired_at END, owner = s.owner, expires_at = DATEADD(MICROSECOND, s.ttl, s.now) WHEN NOT MATCHED THEN INSERT (name, owner, token, acquired_at, expires_at) VALUES (s.name, s.owner, 1, s.now, DATEADD(MICROSECOND, s.ttl, s.now)));

-- tryLock (re-entrant)
SELECT token, acquired_at, expires_at FROM FINAL TABLE (MERGE INTO holdfast_leases t USING (SELECT CAST(? AS VARCHAR) AS name, CAST(? AS VARCHAR) AS owner, HOLDFAST_CLOCK_TIMESTAMP() AS now, CAST(? AS BIGINT) AS ttl) s ON t.name = s.name WHEN MATCHED AND (t.expires_at <= s.now OR t.owner = s.owner) THEN UPDATE SET token = CASE WHEN t.expires_at <= s.now THEN t.token + 1 ELSE t.token END, acquired_at = CASE WHEN t.expires_at <= s.now THEN s.now ELSE t.acquired_at END, owner = s.owner, expires_at = DATEADD(MICROSECOND, s.ttl, s.now) WHEN NOT MATCHED THEN INSERT (name, owner, token, acquired_at, expires_at) VALUES (s.name, s.owner, 1, s.now, DATEADD(MICROSECOND, s.ttl, s.now)));

-- renew
SELECT expires_at FROM FINAL TABLE (UPDATE holdfast_leases SET expires_at = DATEADD(MICROSECOND, CAST(? AS BIGINT), HOLDFAST_CLOCK_TIMESTAMP()) WHERE name = ? AND owner = ? AND token = ? AND expires_at > HOLDFAST_CLOCK_TIMESTAMP());

-- release
UPDATE holdfast_leases SET broken_by = NULL, broken_at = NULL, expires_at = acquired_at WHERE name = ? AND owner = ? AND token = ? AND expires_at > HOLDFAST_CLOCK_TIMESTAMP();

-- unlock (any grant of the owner), with a minimum hold
UPDATE holdfast_leases SET broken_by = NULL, broken_at = NULL, expires_at = CASE WHEN DATEADD(MICROSECOND, CAST(? AS BIGINT), acquired_at) > HOLDFAST_CLOCK_TIMESTAMP() THEN DATEADD(MICROSECOND, CAST(? AS BIGINT), acquired_at) ELSE acquired_at END WHERE name = ? AND owner = ? AND expires_at > HOLDFAST_CLOCK_TIMESTAMP();

-- find (and diagnosing a refusal)
SELECT name, owner, token, acquired_at, expires_at FROM holdfast_leases WHERE name = ?;

-- list (operators)
SELECT name, owner, token, acquired_at, expires_at FROM holdfast_leases WHERE expires_at > HOLDFAST_CLOCK_TIMESTAMP() ORDER BY name;

-- forceRelease (operators)
UPDATE holdfast_leases SET broken_by = ?, broken_at = HOLDFAST_CLOCK_TIMESTAMP(), expires_at = acquired_at WHERE name = ? AND expires_at > HOLDFAST_CLOCK_TIMESTAMP();

-- who broke it (diagnosing a refusal)
SELECT broken_by, broken_at FROM holdfast_leases WHERE name = ? AND broken_by IS NOT NULL;

