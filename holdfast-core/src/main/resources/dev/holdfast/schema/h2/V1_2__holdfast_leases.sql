-- Distributed leases (dev.holdfast.lease). One row per lease name, never deleted: the fencing
-- token lives in the row and must keep growing; a release expires the row (expires_at = acquired_at).
-- broken_by/broken_at: who broke the lease (LeaseService.forceRelease) and when, so that its holder's
-- next release or renewal can say so; cleared by every ordinary release.
-- H2 counts VARCHAR lengths in UTF-16 units, so the limit (200 characters) is doubled here.
CREATE TABLE IF NOT EXISTS ${holdfast_leases_table} (
    name        VARCHAR(400)             NOT NULL PRIMARY KEY,
    owner       VARCHAR(400)             NOT NULL,
    token       BIGINT                   NOT NULL,
    acquired_at TIMESTAMP WITH TIME ZONE NOT NULL,
    expires_at  TIMESTAMP WITH TIME ZONE NOT NULL,
    broken_by   VARCHAR(400),
    broken_at   TIMESTAMP WITH TIME ZONE
);
-- Waiters of the blocking acquire, in arrival order (queued_at, then waiter id): a free lease goes
-- only to the first live waiter, so a releasing caller cannot take it straight back while others
-- wait. Waiters poll (H2 has no notifications): a free lease goes to the first one at its next poll.
-- An entry lives a short while unless its waiter refreshes it, so a crashed waiter never blocks the
-- queue for long. owner holds the waiter id.
CREATE TABLE IF NOT EXISTS ${holdfast_leases_table}_queue (
    name       VARCHAR(400)             NOT NULL,
    owner      VARCHAR(400)             NOT NULL,
    queued_at  TIMESTAMP WITH TIME ZONE NOT NULL,
    wait_until TIMESTAMP WITH TIME ZONE NOT NULL,
    PRIMARY KEY (name, owner)
);
CREATE INDEX IF NOT EXISTS ${holdfast_leases_table}_queue_at ON ${holdfast_leases_table}_queue (name, queued_at);
