-- The waiter mark of the lease row on MariaDB (waiters_until). Here waiters poll and releases hand
-- nothing on: the statement below is a no-op that keeps the migration versions of every database aligned.
CREATE INDEX IF NOT EXISTS ${holdfast_leases_table}_queue_at ON ${holdfast_leases_table}_queue (name, queued_at);
