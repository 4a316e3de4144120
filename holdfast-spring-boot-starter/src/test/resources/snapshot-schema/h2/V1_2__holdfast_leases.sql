-- Distributed leases (dev.holdfast.lease). One row per lease name, never deleted: the fencing
-- token lives in the row and must keep growing; a release expires the row (expires_at = acquired_at).
-- H2 counts VARCHAR lengths in UTF-16 units, so the limit (200 characters) is doubled here.
CREATE TABLE IF NOT EXISTS ${holdfast_leases_table} (
    name        VARCHAR(400)             NOT NULL PRIMARY KEY,
    owner       VARCHAR(400)             NOT NULL,
    token       BIGINT                   NOT NULL,
    acquired_at TIMESTAMP WITH TIME ZONE NOT NULL,
    expires_at  TIMESTAMP WITH TIME ZONE NOT NULL
);
