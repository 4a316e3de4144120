-- Waiters of the blocking acquire, in arrival order (queued_at, then waiter id): a free lease goes
-- only to the first live waiter, so a releasing caller cannot take it straight back while others
-- wait. Waiters poll (MariaDB has no notifications). An entry lives a short while unless its waiter
-- refreshes it, so a crashed waiter never blocks the queue for long. owner holds the waiter id.
CREATE TABLE IF NOT EXISTS ${holdfast_leases_table}_queue (
    name       VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    owner      VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    queued_at  DATETIME(6) NOT NULL,
    wait_until DATETIME(6) NOT NULL,
    PRIMARY KEY (name, owner),
    KEY ${holdfast_leases_table}_queue_at (name, queued_at)
) ENGINE=InnoDB;
