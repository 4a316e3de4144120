package dev.holdfast.lease.internal;

import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;

/**
 * H2's leases ({@link H2LeaseSql}): waiters poll, in statements of their own; a release wakes nobody
 * in the database (a release through the same service wakes its oldest poller in memory); no batches.
 */
final class H2LeaseStore extends LeaseStore {

    private final H2LeaseSql sql;

    H2LeaseStore(H2LeaseSql sql) {
        super(sql);
        this.sql = sql;
    }

    /** Waiters poll: a release through the same service wakes its oldest at once. */
    @Override
    WakeUps wakeUps(LeaseSettings s, LocalPollers pollers, LeaseThreads threads) {
        return new WakeUps.Polled(pollers);
    }

    @Override
    public Optional<LeaseRow> acquireOrQueue(
            Connection c,
            String name,
            String owner,
            String waiter,
            long ttlMicros,
            long queueMicros,
            boolean joined,
            boolean refresh,
            boolean leave,
            @Nullable Integer listener)
            throws SQLException {
        return acquireThenQueue(
                sql, c, name, owner, waiter, ttlMicros, queueMicros, joined && leave, !joined || refresh, listener);
    }
}
