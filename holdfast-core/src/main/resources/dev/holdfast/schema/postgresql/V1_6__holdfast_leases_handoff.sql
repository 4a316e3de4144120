-- Direct hand-off: a release grants a free lease to the first live waiter in the same transaction
-- and notifies it, so the waiter learns of a grant that is already committed. A queue entry says
-- what to grant (the waiter's lease owner and TTL) and which listener connection will deliver the
-- notification (its backend pid: no hand-off to a waiter whose listener is gone). handed_to holds
-- the waiter id a grant was handed to, so that a waiter that missed the notification still finds
-- its grant, and one that gave up gives it back.
ALTER TABLE ${holdfast_leases_table}_queue
    ADD COLUMN IF NOT EXISTS lease_owner VARCHAR(200),
    ADD COLUMN IF NOT EXISTS ttl_micros  BIGINT,
    ADD COLUMN IF NOT EXISTS listener    INTEGER;
ALTER TABLE ${holdfast_leases_table}
    ADD COLUMN IF NOT EXISTS handed_to VARCHAR(200);
