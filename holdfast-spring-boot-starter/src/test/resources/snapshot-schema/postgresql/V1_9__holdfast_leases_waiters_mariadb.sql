-- The waiter mark of the lease row on MariaDB (waiters_until). PostgreSQL has had it since
-- V1_6: the statement below is a no-op that keeps the migration versions of every database aligned.
ALTER TABLE ${holdfast_leases_table} ADD COLUMN IF NOT EXISTS waiters_until TIMESTAMPTZ;
