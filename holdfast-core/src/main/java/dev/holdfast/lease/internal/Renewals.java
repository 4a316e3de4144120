package dev.holdfast.lease.internal;

import dev.holdfast.internal.Failures;
import dev.holdfast.jdbc.internal.Jdbc;
import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.function.LongFunction;

/**
 * Renews grants: for the caller ({@link #renew(LeaseRow, long)}) and for a lease guard
 * ({@link #renew(LeaseRow, Duration, Duration)}, bounded by the connection's network timeout). A lease
 * passed on in memory renews its database grant's row.
 */
final class Renewals {

    private final LeaseCalls calls;
    private final LeaseStore store;
    private final @Nullable CohortHandOffs cohorts;
    private final Refusals refusals;
    private final Releases releases;

    Renewals(
            LeaseCalls calls,
            LeaseStore store,
            @Nullable CohortHandOffs cohorts,
            Refusals refusals,
            Releases releases) {
        this.calls = calls;
        this.store = store;
        this.cohorts = cohorts;
        this.refusals = refusals;
        this.releases = releases;
    }

    /**
     * The caller's renewal.
     *
     * @throws NotHeld why it is not held any more
     */
    LeaseRow renew(LeaseRow lease, long ttlMicros) {
        Optional<Instant> expiry = renewed(
                lease,
                ttlMicros,
                token -> calls.call(
                        "renewing", lease.name(), c -> store.renew(c, lease.name(), lease.owner(), token, ttlMicros)));
        if (expiry.isEmpty()) {
            throw refusals.notHeld("renew", lease.name(), lease.owner(), lease.token());
        }
        return new LeaseRow(lease.name(), lease.owner(), lease.token(), lease.acquiredAt(), expiry.get());
    }

    /**
     * A guard's renewal. The connection's network timeout is set to {@code bound} for the statement
     * and restored before the connection goes back to the pool, so a renewal stuck on a stalled server
     * or a row lock ends (the driver then discards the connection). Waiting for a pooled connection
     * is bounded by the pool's own timeout only; the guard's deadline does not depend on either. A
     * driver without network timeouts ({@link SQLFeatureNotSupportedException}) renews unbounded. A
     * failure to restore the timeout after a failed renewal is added to that failure as suppressed.
     */
    Optional<LeaseRow> renew(LeaseRow lease, Duration ttl, Duration bound) {
        long ttlMicros = ttl.toNanos() / 1000;
        int boundMillis = (int) Math.min(Integer.MAX_VALUE, bound.toMillis());
        Optional<Instant> expiry =
                renewed(lease, ttlMicros, token -> renewBounded(lease, token, ttlMicros, boundMillis));
        if (expiry.isPresent()) {
            return Optional.of(
                    new LeaseRow(lease.name(), lease.owner(), lease.token(), lease.acquiredAt(), expiry.get()));
        }
        NotHeld why;
        try {
            why = refusals.notHeld(
                    "renew", lease.name(), lease.owner(), cohorts == null ? lease.token() : cohorts.rowToken(lease));
        } catch (RuntimeException e) {
            return Optional.empty(); // the row cannot be read: the loss stands anyway
        }
        throw why;
    }

    void release(LeaseRow lease) {
        releases.release(lease.name(), lease.owner(), lease.token(), null);
    }

    /**
     * Runs a renewal of {@code lease} with the row's token: the lease's own, or for a lease passed on
     * in this service, its database grant's (under that grant's lock, whose expiry it records).
     */
    private Optional<Instant> renewed(LeaseRow lease, long ttlMicros, LongFunction<Optional<Instant>> renewal) {
        Cohort.Held held = cohorts == null ? null : cohorts.hold(lease);
        if (held == null) {
            return renewal.apply(lease.token());
        }
        try {
            long sent = System.nanoTime();
            Optional<Instant> expiry = renewal.apply(held.rowToken());
            if (expiry.isPresent()) {
                held.renewed(expiry.get(), ttlMicros, sent);
            } else {
                held.lost();
            }
            return expiry;
        } finally {
            held.done();
        }
    }

    @FunctionalInterface
    private interface SqlWork<T> {
        T run() throws SQLException;
    }

    private Optional<Instant> renewBounded(LeaseRow lease, long token, long ttlMicros, int boundMillis) {
        try (Connection c = calls.dataSource().getConnection()) {
            SqlWork<Optional<Instant>> renewal =
                    () -> Jdbc.autocommit(c, cc -> store.renew(cc, lease.name(), lease.owner(), token, ttlMicros));
            int saved;
            try {
                saved = c.getNetworkTimeout();
                c.setNetworkTimeout(Runnable::run, boundMillis);
            } catch (SQLFeatureNotSupportedException unsupported) {
                return renewal.run(); // the driver cannot bound it: the guard's deadline still fires
            }
            SQLException failure = null;
            try {
                return renewal.run();
            } catch (SQLException e) {
                failure = e;
                throw e;
            } finally {
                try {
                    if (!c.isClosed()) {
                        c.setNetworkTimeout(Runnable::run, saved);
                    }
                } catch (SQLException restore) {
                    // e.g. a pool's proxy still open over a connection the driver aborted
                    if (failure == null) {
                        throw restore;
                    }
                    failure.addSuppressed(restore);
                }
            }
        } catch (SQLException e) {
            throw Failures.database("renewing lease '" + lease.name() + "'", e);
        }
    }
}
