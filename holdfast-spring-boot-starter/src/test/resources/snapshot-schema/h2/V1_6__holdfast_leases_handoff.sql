-- Direct hand-off (a release granting the lease to the first waiter) needs notifications, which
-- only PostgreSQL has; here waiters poll, and a free lease goes to the first one at its next poll.
-- Nothing to change: the statement below is a no-op that keeps the migration versions of every
-- database aligned.
CREATE INDEX IF NOT EXISTS ${holdfast_leases_table}_queue_at ON ${holdfast_leases_table}_queue (name, queued_at);
