-- The failover grace period reads PostgreSQL's WAL timeline, which only PostgreSQL has.
-- Nothing to change: the statement below is a no-op that keeps the migration versions of every
-- database aligned.
CREATE INDEX IF NOT EXISTS ${holdfast_leases_table}_queue_at ON ${holdfast_leases_table}_queue (name, queued_at);
