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
 * @param batching       whether concurrent calls commit together
 * @param lingerNanos    with batching: 0 to send a batch as soon as the last is done (concurrent),
 *                       {@link #ADAPTIVE} to wait as long as it pays, else how long a lockstep batch waits
 *                       for more calls
 * @param failoverGraceMicros the longest TTL, and on PostgreSQL the grace after a promotion in which
 *                       nothing is granted; 0 for neither
 * @param listenerDataSource PostgreSQL: where the wake-ups' listener connects, null for {@code dataSource}
 * @param connectionPool MariaDB: how the wake-ups' connections leave the pool, and its size for a warning
 */
public record LeaseSettings(DataSource dataSource, Dialect dialect, String table, CommitDurability durability,
                            int cohortHandOffs, boolean batching, long lingerNanos, long failoverGraceMicros,
                            LeaseTuning tuning, @Nullable DataSource listenerDataSource,
                            ConnectionPool connectionPool) {

    /** {@code lingerNanos} of adaptive batching. */
    public static final long ADAPTIVE = -1;

    boolean relaxedReleases() {
        return durability == CommitDurability.RELAXED;
    }
}
