-- The stored place of a queue entry on MariaDB. PostgreSQL orders its queue by seq: the statement
-- below is a no-op that keeps the migration versions of every database aligned.
CREATE INDEX IF NOT EXISTS ${holdfast_leases_table}_queue_seq ON ${holdfast_leases_table}_queue (name, seq);
