-- Direct hand-off on MariaDB: a release that frees a lease grants it, in the same statement, to the
-- first live waiter whose service is alive, so that the waiter only reads its grant. A queue entry
-- says what to grant (the waiter's lease owner and TTL) and which wake-up connection is alive for
-- it (its connection id: that connection holds a user-level lock named after it while it serves);
-- handed_to holds the waiter id of the waiting call that holds the grant, so that the waiter finds
-- its grant and a waiter that gave up gives it back. served marks the place in the queue (queued_at
-- as 20 digits, then the waiter id) up to which entries belong to calls granted already: they are
-- neither handed the lease nor make others wait, though they go only after their call returned.
ALTER TABLE ${holdfast_leases_table}_queue
    ADD COLUMN IF NOT EXISTS lease_owner VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NULL,
    ADD COLUMN IF NOT EXISTS ttl_micros  BIGINT NULL,
    ADD COLUMN IF NOT EXISTS listener    BIGINT NULL;
ALTER TABLE ${holdfast_leases_table}
    ADD COLUMN IF NOT EXISTS handed_to VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NULL,
    ADD COLUMN IF NOT EXISTS served    VARCHAR(220) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NULL;
