package dev.holdfast.lease;

import dev.holdfast.jdbc.CommitDurability;
import dev.holdfast.jdbc.dialect.Dialect;

import javax.sql.DataSource;

/**
 * What a {@link LeaseService.Builder} configured, checked and complete.
 *
 * @param cohortHandOffs in-memory hand-offs of one database grant at most, 0 for off
 */
record LeaseSettings(DataSource dataSource, Dialect dialect, String table, CommitDurability durability,
                     int cohortHandOffs, Batching batching, LeaseTuning tuning) {

    boolean relaxedReleases() {
        return durability == CommitDurability.RELAXED;
    }
}
