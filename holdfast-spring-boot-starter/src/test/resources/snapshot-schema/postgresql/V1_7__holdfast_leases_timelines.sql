-- The failover grace period (LeaseService.Builder.failoverGrace): when a grant statement first runs on
-- a new WAL timeline (the server was promoted), it records when, and no lease is granted on that
-- timeline until the grace has passed since, so that no new grant can overlap a grant the old
-- primary made and this server never received (asynchronous replication). Unused without the grace.
CREATE TABLE IF NOT EXISTS ${holdfast_leases_table}_timelines (
    timeline   INTEGER     NOT NULL PRIMARY KEY,
    first_seen TIMESTAMPTZ NOT NULL
);
