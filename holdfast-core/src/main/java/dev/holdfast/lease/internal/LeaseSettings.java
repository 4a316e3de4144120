package dev.holdfast.lease.internal;

import dev.holdfast.jdbc.CommitDurability;
import dev.holdfast.jdbc.ConnectionPool;
import dev.holdfast.jdbc.dialect.Dialect;
import org.jspecify.annotations.Nullable;

import javax.sql.DataSource;

/**
 * What a {@code LeaseService.Builder} configured, checked and complete.
 *
 * @param cohortHandOffs in-memory hand-offs of one database grant at most, 0 for off
 * @param batching       whether and how concurrent calls commit together
 * @param failoverGraceMicros the longest TTL, and on PostgreSQL the grace after a promotion in which
 *                       nothing is granted; 0 for neither
 * @param listenerDataSource PostgreSQL: where the wake-ups' listener connects, null for {@code dataSource}
 * @param connectionPool MariaDB: how the wake-ups' connections leave the pool, and its size for a warning
 */
public record LeaseSettings(
        DataSource dataSource,
        Dialect dialect,
        String table,
        CommitDurability durability,
        int cohortHandOffs,
        BatchMode batching,
        long failoverGraceMicros,
        LeaseTuning tuning,
        @Nullable DataSource listenerDataSource,
        ConnectionPool connectionPool) {

    boolean relaxedReleases() {
        return durability == CommitDurability.RELAXED;
    }
}
