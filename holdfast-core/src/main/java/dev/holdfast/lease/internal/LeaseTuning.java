package dev.holdfast.lease.internal;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Tests and benchmarks: the knobs of a service that users do not turn ({@code LeaseService.Builder#tune}); internal, may change in any release.
 *
 * @param batchesInFlight statements of each batched kind in flight at once (0: {@link LeaseBatches#MAX_IN_FLIGHT})
 * @param overlapAt       calls queued before another batch starts while one is in flight (0: {@link LeaseBatches#OVERLAP_AT})
 * @param batchLoneCalls  whether a lone call too goes as a batch (of one) through the multi-row statements
 * @param polling         how often waiters poll
 * @param timeline        PostgreSQL: the WAL timeline the statements take as the server's (0: the server's own), so that
 *                        tests can act out a promotion on a server that was never promoted
 * @param notifyProbe     how long a PostgreSQL listener waits for its probe notification ({@link NotifyProbe})
 * @param wakeUps         MariaDB: whether waiters publish a wake-up connection ({@link MariaDbWakeUps}), so that a
 *                        release hands them the lease and wakes them; off, they poll and take it by their own looks
 */
public record LeaseTuning(
        int batchesInFlight,
        int overlapAt,
        boolean batchLoneCalls,
        Polling polling,
        int timeline,
        Duration notifyProbe,
        boolean wakeUps) {

    public static final LeaseTuning DEFAULT =
            new LeaseTuning(0, 0, false, Polling.DEFAULT, 0, Duration.ofSeconds(2), true);

    public LeaseTuning {
        if (timeline < 0) {
            throw new IllegalArgumentException("timeline must be 0 (the server's) or positive, not " + timeline);
        }
    }

    public LeaseTuning batchesInFlight(int statements, int overlapAt) {
        return new LeaseTuning(statements, overlapAt, batchLoneCalls, polling, timeline, notifyProbe, wakeUps);
    }

    public LeaseTuning batchLoneCalls(boolean batchLoneCalls) {
        return new LeaseTuning(batchesInFlight, overlapAt, batchLoneCalls, polling, timeline, notifyProbe, wakeUps);
    }

    /** The shortest and longest poll of a queued waiter that is not notified. */
    public LeaseTuning queuedPoll(Duration min, Duration max) {
        return new LeaseTuning(
                batchesInFlight,
                overlapAt,
                batchLoneCalls,
                new Polling(polling.safetyPollNanos(), min.toNanos(), max.toNanos(), polling.pollingEntryMicros()),
                timeline,
                notifyProbe,
                wakeUps);
    }

    /** How often a notified waiter re-checks anyway. */
    public LeaseTuning safetyPoll(Duration interval) {
        return new LeaseTuning(
                batchesInFlight,
                overlapAt,
                batchLoneCalls,
                new Polling(
                        interval.toNanos(),
                        polling.minPollNanos(),
                        polling.maxQueuedPollNanos(),
                        polling.pollingEntryMicros()),
                timeline,
                notifyProbe,
                wakeUps);
    }

    /** How long a polling waiter's queue entry lives unless refreshed (H2, MariaDB; MariaDB waiters look twice in it). */
    public LeaseTuning pollingQueueEntry(Duration lifetime) {
        return new LeaseTuning(
                batchesInFlight,
                overlapAt,
                batchLoneCalls,
                new Polling(
                        polling.safetyPollNanos(),
                        polling.minPollNanos(),
                        polling.maxQueuedPollNanos(),
                        lifetime.toNanos() / 1000),
                timeline,
                notifyProbe,
                wakeUps);
    }

    /** PostgreSQL: statements take {@code timeline} as the server's WAL timeline (0: the server's own). */
    public LeaseTuning timeline(int timeline) {
        return new LeaseTuning(batchesInFlight, overlapAt, batchLoneCalls, polling, timeline, notifyProbe, wakeUps);
    }

    /** How long a PostgreSQL listener waits for its probe notification before it polls for good. */
    public LeaseTuning notifyProbe(Duration bound) {
        return new LeaseTuning(batchesInFlight, overlapAt, batchLoneCalls, polling, timeline, bound, wakeUps);
    }

    /**
     * How often waiters of {@link BlockingAcquire} poll, and how long a polling waiter's queue entry lives:
     * a MariaDB waiter whose wake-up connection watches looks at least twice per entry lifetime, as no
     * listener tells a release that it is alive.
     *
     * @param safetyPollNanos    how often a notified waiter re-checks anyway (refreshing its queue entry, noticing expiries)
     * @param minPollNanos       the first poll of a waiter that is not notified, and its poll after a wake-up
     * @param maxQueuedPollNanos the longest poll of a queued waiter that is not notified (H2, MariaDB): a free
     *                           lease waits for the first waiter's next poll, as nobody else may take it
     * @param pollingEntryMicros how long a polling waiter's queue entry lives unless refreshed
     */
    record Polling(long safetyPollNanos, long minPollNanos, long maxQueuedPollNanos, long pollingEntryMicros) {
        static final long MIN_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
        static final Polling DEFAULT = new Polling(
                TimeUnit.MILLISECONDS.toNanos(500),
                MIN_POLL_NANOS,
                TimeUnit.MILLISECONDS.toNanos(5),
                BlockingAcquire.QUEUE_ENTRY_MICROS);
    }

    /** MariaDB: whether waiters are handed leases and woken by releases (benchmarks' yardstick: off, they poll). */
    public LeaseTuning wakeUps(boolean on) {
        return new LeaseTuning(batchesInFlight, overlapAt, batchLoneCalls, polling, timeline, notifyProbe, on);
    }
}
