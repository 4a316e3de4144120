-- Offline pessimistic locks (dev.holdfast.pessimistic.offline). One row per resource that was ever locked;
-- a released or expired row is taken over in place by the next tryLock, and purged by operators.
-- lock_id is NULL once released; expiry is decided by database time only (UTC in DATETIME(6)).
-- utf8mb4_nopad_bin: exact, case- and trailing-space-sensitive comparison, as on PostgreSQL and H2
-- (a case-insensitive lock_id would also cost the token entropy).
CREATE TABLE IF NOT EXISTS ${holdfast_locks_table} (
    lock_type   VARCHAR(100) NOT NULL,
    resource_id VARCHAR(200) NOT NULL,
    lock_id     VARCHAR(32) NULL,
    lock_owner  VARCHAR(200) NULL,
    acquired_at DATETIME(6) NOT NULL,
    expires_at  DATETIME(6) NOT NULL,
    PRIMARY KEY (lock_type, resource_id),
    UNIQUE KEY ${holdfast_locks_table}_lock_id_uk (lock_id),
    KEY ${holdfast_locks_table}_expires_ix (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
