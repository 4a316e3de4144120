-- Distributed leases (dev.holdfast.lease). One row per lease name, never deleted: the fencing
-- token lives in the row and must keep growing; a release expires the row (expires_at = acquired_at).
CREATE TABLE IF NOT EXISTS ${holdfast_leases_table} (
    name        VARCHAR(200)             NOT NULL PRIMARY KEY,
    owner       VARCHAR(200)             NOT NULL,
    token       BIGINT                   NOT NULL,
    acquired_at TIMESTAMP WITH TIME ZONE NOT NULL,
    expires_at  TIMESTAMP WITH TIME ZONE NOT NULL
);
