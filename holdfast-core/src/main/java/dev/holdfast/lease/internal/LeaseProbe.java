package dev.holdfast.lease.internal;

import org.jspecify.annotations.Nullable;

import java.time.Instant;
import java.util.function.BiConsumer;

/** Tests and benchmarks: what a service did, counted by its parts, and a hook told of every grant. */
public final class LeaseProbe {

    private final BlockingAcquire blocking;
    private final @Nullable CohortHandOffs cohorts;
    private final @Nullable LeaseBatches batches;
    private final Grants grants;
    private final LeaseThreads threads;

    LeaseProbe(
            BlockingAcquire blocking,
            @Nullable CohortHandOffs cohorts,
            @Nullable LeaseBatches batches,
            Grants grants,
            LeaseThreads threads) {
        this.threads = threads;
        this.blocking = blocking;
        this.cohorts = cohorts;
        this.batches = batches;
        this.grants = grants;
    }

    /** How many grants this service's waiters took from a hand-off's notification. */
    public long handOffsReceived() {
        return blocking.handOffsReceived();
    }

    /**
     * How many hand-off notifications, each carrying a grant, reached this service's PostgreSQL listener, whether
     * or not the waiter took its grant from them (it may have found it with a safety poll first); 0 elsewhere.
     */
    public long handOffNotificationsHeard() {
        return blocking.wakeUps().grantsHeard();
    }

    /** Whether this service's PostgreSQL listener listens now (false elsewhere, and until a waiting call starts it). */
    public boolean listening() {
        return blocking.wakeUps().listening();
    }

    /** Whether the listener found that a pooler keeps notifications from it (PgBouncer in transaction mode): waiters poll. */
    public boolean listenerBehindPooler() {
        return blocking.wakeUps().behindPooler();
    }

    /**
     * MariaDB: whether the wake-up connection is up, so that this service's waiting calls watch on it, in turn, for
     * leases handed to them (a release wakes the watch).
     */
    public boolean wakeUpWatching() {
        return blocking.wakeUps().watching();
    }

    /** MariaDB: how many of the wake-ups' connections this service handed to its pool to retire (ended for good). */
    public long wakeUpConnectionsRetired() {
        return blocking.wakeUps().retired();
    }

    /** How many leases this service's guards lost since it was built. */
    public long leasesLost() {
        return threads.losses();
    }

    /** Why the latest of those was lost (name, owner, token and reason), or null if none was. */
    public @Nullable String lastLoss() {
        return threads.lastLoss();
    }

    /** When the latest of those was found lost (this JVM's clock), or null if none was. */
    public @Nullable Instant lastLossAt() {
        return threads.lastLossAt();
    }

    /** How many times this service passed a lease on in memory. */
    public long cohortHandOffs() {
        return cohorts == null ? 0 : cohorts.handOffs();
    }

    /** How many of this service's grants it keeps for cohort hand-off. */
    public int cohortGrants() {
        return cohorts == null ? 0 : cohorts.recorded();
    }

    /** How many calls wait for this service's grant of {@code name} under {@code owner}. */
    public int cohortWaiters(String name, String owner) {
        return cohorts == null ? 0 : cohorts.waiters(name, owner);
    }

    /** Whether this service built batching machinery: false with batching off, and on H2. */
    public boolean batching() {
        return batches != null;
    }

    /** How many of this service's calls went to the database in multi-row batches. */
    public long batchedCalls() {
        return batches == null ? 0 : batches.batchedCalls();
    }

    /** How many multi-row statements this service sent. */
    public long multiRowStatements() {
        return batches == null ? 0 : batches.multiRowStatements();
    }

    /**
     * What the batches counted: acquire calls, acquire statements, release calls and release statements; all 0
     * without batches.
     */
    public long[] batchCounts() {
        return batches == null ? new long[4] : batches.counts();
    }

    /** How many of this service's calls are queued for a batch. */
    public int queuedForBatches() {
        return batches == null ? 0 : batches.queued();
    }

    /** Tells {@code observer} of each grant, on the caller's thread, before it is returned. */
    public void observeGrants(@Nullable BiConsumer<LeaseRow, Grants.Path> observer) {
        grants.observe(observer);
    }
}
