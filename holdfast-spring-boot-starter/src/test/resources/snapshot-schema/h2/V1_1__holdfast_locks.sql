-- Offline pessimistic locks (dev.holdfast.pessimistic.offline). One row per resource that was ever locked;
-- a released or expired row is taken over in place by the next tryLock, and purged by operators.
-- lock_id is NULL once released; expiry is decided by database time only.
-- H2 counts VARCHAR lengths in UTF-16 units, so the limits (100/200 characters) are doubled here.
CREATE TABLE IF NOT EXISTS ${holdfast_locks_table} (
    lock_type   VARCHAR(200) NOT NULL,
    resource_id VARCHAR(400) NOT NULL,
    lock_id     VARCHAR(32),
    lock_owner  VARCHAR(400),
    acquired_at TIMESTAMP(6) WITH TIME ZONE NOT NULL,
    expires_at  TIMESTAMP(6) WITH TIME ZONE NOT NULL,
    CONSTRAINT ${holdfast_locks_table}_pk PRIMARY KEY (lock_type, resource_id)
);
CREATE UNIQUE INDEX IF NOT EXISTS ${holdfast_locks_table}_lock_id_uk ON ${holdfast_locks_table} (lock_id);
CREATE INDEX IF NOT EXISTS ${holdfast_locks_table}_expires_ix ON ${holdfast_locks_table} (expires_at);
