-- Waiters of the blocking acquire, in arrival order (queued_at, then waiter id): a free lease goes
-- only to the first live waiter, so a releasing caller cannot take it straight back while others
-- wait. Waiters poll (H2 has no notifications). An entry lives a short while unless its waiter
-- refreshes it, so a crashed waiter never blocks the queue for long. owner holds the waiter id.
CREATE TABLE IF NOT EXISTS ${holdfast_leases_table}_queue (
    name       VARCHAR(400)             NOT NULL,
    owner      VARCHAR(400)             NOT NULL,
    queued_at  TIMESTAMP WITH TIME ZONE NOT NULL,
    wait_until TIMESTAMP WITH TIME ZONE NOT NULL,
    PRIMARY KEY (name, owner)
);
CREATE INDEX IF NOT EXISTS ${holdfast_leases_table}_queue_at ON ${holdfast_leases_table}_queue (name, queued_at);
