-- Distributed leases (dev.holdfast.lease). One row per lease name, never deleted: the fencing
-- token lives in the row and must keep growing; a release expires the row (expires_at = acquired_at).
-- Binary, no-pad collation: owners 'A' and 'a' and "a " are different owners. Times are UTC.
CREATE TABLE IF NOT EXISTS ${holdfast_leases_table} (
    name        VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY,
    owner       VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    token       BIGINT      NOT NULL,
    acquired_at DATETIME(6) NOT NULL,
    expires_at  DATETIME(6) NOT NULL
) ENGINE=InnoDB;
