-- Direct hand-off: right after a release frees a lease, the releasing call grants it to the first
-- live waiter and notifies it, so the waiter learns of a grant that is already committed. A queue entry says
-- what to grant (the waiter's lease owner and TTL) and which listener connection will deliver the
-- notification (its backend pid: no hand-off to a waiter whose listener is gone). handed_to holds
-- the waiter id a grant was handed to, so that a waiter that missed the notification still finds
-- its grant, and one that gave up gives it back. waiters_until is raised by every waiter that
-- queues, on the lease row itself, so that a release learns from its own row whether to hand off:
-- nobody waiting costs it nothing more.
ALTER TABLE ${holdfast_leases_table}_queue
    ADD COLUMN IF NOT EXISTS lease_owner VARCHAR(200),
    ADD COLUMN IF NOT EXISTS ttl_micros  BIGINT,
    ADD COLUMN IF NOT EXISTS listener    INTEGER;
ALTER TABLE ${holdfast_leases_table}
    ADD COLUMN IF NOT EXISTS handed_to     VARCHAR(200),
    ADD COLUMN IF NOT EXISTS waiters_until TIMESTAMPTZ;
