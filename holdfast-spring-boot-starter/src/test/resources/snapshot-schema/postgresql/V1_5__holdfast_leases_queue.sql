-- The waiter queue of H2 and MariaDB arrives with this version; PostgreSQL has had one since the
-- leases table (V1_2). Nothing to change here: the statement below is a no-op that keeps the
-- migration versions of every database aligned.
CREATE INDEX IF NOT EXISTS ${holdfast_leases_table}_queue_seq ON ${holdfast_leases_table}_queue (name, seq);
