package dev.holdfast.pessimistic;

import dev.holdfast.jdbc.dialect.Dialect;
import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * Watches bounded lock waits so that one whose bound runs out can say who blocked it. A database
 * names the holders of a lock only to a session that waits for it, and the waiting connection can
 * run nothing else, so the watch reads it from another connection while the lock still waits:
 * {@link #LEAD} before the bound runs out (half the bound, for a bound under twice that), on an
 * observer thread ({@link BlockerThreads}). A lock that ends in time costs a timer entry made and
 * cancelled in memory: no statement, no connection. A lock whose bound ran out waits at most
 * {@link #GRACE} for an observation still running, and never fails because of it.
 */
final class BlockerWatcher {

    /** How long before the bound runs out the wait is observed, at most. */
    static final Duration LEAD = Duration.ofMillis(500);

    /** Longest a lock whose bound ran out waits for its observation to finish. */
    static final Duration GRACE = Duration.ofMillis(100);

    private final Dialect dialect;
    private final @Nullable BlockerProbe probe;
    private final Watch unknown;
    private final Watch noWait;

    private BlockerWatcher(Dialect dialect, @Nullable BlockerProbe probe, String unknownBecause) {
        this.dialect = dialect;
        this.probe = probe;
        this.unknown = new Watch(unknownBecause, 0);
        this.noWait = new Watch(
                "a lock that does not wait cannot be observed waiting, and a database names"
                        + " the holders of a lock only to a session that waits for it",
                0);
    }

    /** Observes nothing: every timeout's blockers are unknown {@code because}. */
    static BlockerWatcher none(Dialect dialect, String because) {
        return new BlockerWatcher(dialect, null, because);
    }

    /** Observes waits through connections of {@code source}. */
    static BlockerWatcher through(Dialect dialect, DataSource source) {
        return new BlockerWatcher(dialect, new BlockerProbe(BlockerSql.forDialect(dialect), source), "unused");
    }

    boolean observes() {
        return probe != null;
    }

    /**
     * Starts watching the wait of a lock statement on {@code connection} that began at
     * {@code start} ({@link System#nanoTime()}); end the watch with {@link Watch#end()}.
     */
    Watch watch(Connection connection, LockWait wait, long start) {
        BlockerProbe p = probe;
        if (p == null) {
            return unknown;
        }
        if (wait.mode() != LockWait.Mode.BOUNDED) {
            return noWait;
        }
        long bound = wait.bound().toNanos();
        long delay = bound - Math.min(bound / 2, LEAD.toNanos());
        Watch watch = new Watch(null, delay);
        long deadline = start + bound;
        watch.timer = BlockerThreads.TIMER.schedule(
                () -> watch.fire(dialect, connection, p, deadline),
                start + delay - System.nanoTime(),
                TimeUnit.NANOSECONDS);
        return watch;
    }

    /** One lock statement's watch. */
    static final class Watch {
        private static final int PLANNED = 0;
        private static final int STARTED = 1;
        private static final int SKIPPED = 2;

        private final @Nullable String unknownBecause;
        private final long plannedAfterNanos;
        private final AtomicInteger state = new AtomicInteger(PLANNED);
        private final CompletableFuture<Blockers> result = new CompletableFuture<>();
        private final CountDownLatch ended = new CountDownLatch(1);
        private volatile @Nullable ScheduledFuture<?> timer;

        private Watch(@Nullable String unknownBecause, long plannedAfterNanos) {
            this.unknownBecause = unknownBecause;
            this.plannedAfterNanos = plannedAfterNanos;
        }

        /** On the timer: hands the observation to an observer thread (the timer never blocks). */
        private void fire(Dialect dialect, Connection connection, BlockerProbe probe, long deadline) {
            if (!state.compareAndSet(PLANNED, STARTED)) {
                return;
            }
            try {
                BlockerThreads.OBSERVERS.execute(() -> {
                    try {
                        result.complete(observe(dialect, connection, probe, deadline));
                    } catch (RuntimeException e) {
                        result.complete(Blockers.unknown("observing the wait failed: " + e));
                    }
                });
            } catch (RejectedExecutionException e) {
                result.complete(Blockers.unknown(
                        BlockerThreads.MAX_OBSERVATIONS + " observations of other lock waits were running"));
            }
        }

        private Blockers observe(Dialect dialect, Connection connection, BlockerProbe probe, long deadline) {
            String session = SessionIds.of(dialect, connection);
            if (session == null) {
                return Blockers.unknown("the JDBC driver of this connection does not tell its session id"
                        + " (Holdfast reads it from pgjdbc, MariaDB Connector/J and embedded H2)");
            }
            return probe.observe(session, deadline, ended);
        }

        /**
         * The blockers of a lock whose bound ran out, called before its transaction is rolled back:
         * what the observation found, waiting for it at most {@link #GRACE}.
         */
        Blockers blockers(Duration waited) {
            if (unknownBecause != null) {
                return Blockers.unknown(unknownBecause);
            }
            if (state.compareAndSet(PLANNED, SKIPPED)) {
                end();
                return Blockers.unknown("the wait ended after " + waited.toMillis() + " ms, before it was to be"
                        + " observed (" + TimeUnit.NANOSECONDS.toMillis(plannedAfterNanos) + " ms into it)");
            }
            try {
                return result.get(GRACE.toNanos(), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                return Blockers.unknown(
                        "observing the wait took longer than the bound plus " + GRACE.toMillis() + " ms");
            } catch (ExecutionException e) {
                return Blockers.unknown("observing the wait failed: " + e.getCause()); // never: completed with a value
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Blockers.unknown("interrupted while waiting for the observation of the wait");
            }
        }

        /** The lock statement ended: a planned observation is dropped, a running one stops reading. */
        void end() {
            ended.countDown();
            ScheduledFuture<?> t = timer;
            if (t != null) {
                t.cancel(false);
            }
        }
    }
}
