-- Direct hand-off on MariaDB (the queue's lease owner, TTL and wake-up connection; the lease's
-- handed_to). Nothing to change here: the statement below is a no-op that keeps the migration
-- versions of every database aligned.
CREATE INDEX IF NOT EXISTS ${holdfast_leases_table}_queue_seq ON ${holdfast_leases_table}_queue (name, seq);
