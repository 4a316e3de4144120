package dev.holdfast.lease.internal;

import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;

/**
 * MariaDB's leases ({@link MariaDbLeaseSql}): waiters poll, in statements of their own, and a release
 * hands the lease to the first waiter whose service's wake-up connection is alive, then wakes that
 * service ({@link MariaDbHandOff}, {@link MariaDbWakeUps}); batches bind row by row.
 */
final class MariaDbLeaseStore extends LeaseStore {

    private final MariaDbLeaseSql sql;
    /** Wakes the service of the waiter a release handed the lease to; what that service read as next. */
    private final HandOffWakes wakes = new HandOffWakes();

    MariaDbLeaseStore(MariaDbLeaseSql sql) {
        super(sql);
        this.sql = sql;
    }

    /** The wake-ups of this store's releases, and the next waiters its service's wake-up connection read. */
    HandOffWakes handOffWakes() {
        return wakes;
    }

    /** A wake-up connection of the service's pool, unless tuned off (then waiters poll). */
    @Override
    WakeUps wakeUps(LeaseSettings s, LocalPollers pollers, LeaseThreads threads) {
        return s.tuning().wakeUps()
                ? new MariaDbWakeUps(
                        s.dataSource(),
                        s.connectionPool(),
                        sql,
                        pollers,
                        threads,
                        s.tuning().polling().safetyPollNanos(),
                        wakes.nextWaiters())
                : new WakeUps.Polled(pollers);
    }

    @Override
    @Nullable
    BatchLeaseSql batchSql() {
        return sql;
    }

    @Override
    boolean handsOnAfterBatch() {
        return true;
    }

    /** A waiter already queued, or one that queues for a name whose last release here had waiters, reads first. */
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
        boolean readFirst = (joined || contended.contains(name)) && c.getAutoCommit();
        return readFirst
                        && MariaDbHandOff.waitsOn(
                                c, sql, name, owner, waiter, ttlMicros, queueMicros, !joined || refresh, listener)
                ? Optional.empty()
                : acquireThenQueue(
                        sql,
                        c,
                        name,
                        owner,
                        waiter,
                        ttlMicros,
                        queueMicros,
                        (joined || readFirst) && leave,
                        !readFirst && (!joined || refresh),
                        listener);
    }

    @Override
    boolean servedPast(ResultSet rs) throws SQLException {
        return sql.servedPast(rs);
    }

    @Override
    void requeue(Connection c, String name, String waiter) throws SQLException {
        MariaDbHandOff.requeue(c, sql, name, waiter);
    }

    /** Also gives back a grant handed to the waiter meanwhile (which then goes to the next waiter), unless its call was {@code granted}. */
    @Override
    public void giveUp(Connection c, String name, String waiter, boolean granted) throws SQLException {
        if (granted) {
            super.giveUp(c, name, waiter, true);
        } else {
            MariaDbHandOff.giveUp(c, sql, name, waiter);
        }
    }

    /** The plain release matches only while nobody may wait ({@link MariaDbLeaseSql#releaseSql}); else the hand-off. */
    @Override
    boolean runRelease(
            Connection c,
            String name,
            String owner,
            @Nullable Long token,
            @Nullable Long heldAtLeastMicros,
            boolean withHandOff,
            String release,
            Binder bind)
            throws SQLException {
        if (heldAtLeastMicros != null) {
            return update(c, release, name, withHandOff, bind);
        }
        if (!withHandOff && update(c, release, name, false, bind)) {
            return true;
        }
        MariaDbHandOff.Released released = MariaDbHandOff.release(c, sql, name, owner, token, wakes);
        if (released.held()) {
            contended.found(name, released.queued());
        }
        return released.held();
    }
}
