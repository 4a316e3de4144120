package dev.holdfast.lease;

import org.jspecify.annotations.Nullable;

import java.util.function.BiConsumer;

/** Tests and benchmarks: what a service did, counted by its parts, and a hook told of every grant. */
final class LeaseProbe {

    private final BlockingAcquire blocking;
    private final @Nullable CohortHandOffs cohorts;
    private final @Nullable LeaseBatches batches;
    private final Grants grants;
    private final Batching batching;

    LeaseProbe(BlockingAcquire blocking, @Nullable CohortHandOffs cohorts, @Nullable LeaseBatches batches, Grants grants,
               Batching batching) {
        this.blocking = blocking;
        this.cohorts = cohorts;
        this.batches = batches;
        this.grants = grants;
        this.batching = batching;
    }

    /** The batching the service was built with. */
    Batching batching() {
        return batching;
    }

    /** How many grants this service's waiters took from a hand-off's notification. */
    long handOffsReceived() {
        return blocking.handOffsReceived();
    }

    /** How many times this service passed a lease on in memory. */
    long cohortHandOffs() {
        return cohorts == null ? 0 : cohorts.handOffs();
    }

    /** How many of this service's grants it keeps for cohort hand-off. */
    int cohortGrants() {
        return cohorts == null ? 0 : cohorts.recorded();
    }

    /** How many calls wait for this service's grant of {@code name} under {@code owner}. */
    int cohortWaiters(String name, String owner) {
        return cohorts == null ? 0 : cohorts.waiters(name, owner);
    }

    /** How many of this service's calls went to the database in multi-row batches. */
    long batchedCalls() {
        return batches == null ? 0 : batches.batchedCalls();
    }

    /** How many multi-row statements this service sent. */
    long multiRowStatements() {
        return batches == null ? 0 : batches.multiRowStatements();
    }

    /** How many of this service's calls are queued for a batch. */
    int queuedForBatches() {
        return batches == null ? 0 : batches.queued();
    }

    /** Tells {@code observer} of each grant, on the caller's thread, before it is returned. */
    void observeGrants(@Nullable BiConsumer<Lease, Grants.Path> observer) {
        grants.observe(observer);
    }
}
