package dev.holdfast.lease;

import dev.holdfast.lease.internal.LeaseProbe;

/**
 * What batching and cohort hand-off did in one {@link LeaseService} since it was built
 * ({@link LeaseService#batchingStats()}): a snapshot; each count only grows. All zero where batching is
 * off (and on H2, where it always is) and cohort hand-off is off.
 *
 * <p>How to read it: {@link #acquireCallsPerStatement()} (or releases') of 1.0 means batching never engaged
 * (every call went alone: no concurrent calls); 8.0 means eight calls shared each commit on average.
 * {@link #cohortHandOffs()} 0 while {@code acquire} callers wait means cohort hand-off passed
 * nothing on in memory, for example because each thread acquires under an owner of its own.
 *
 * @param acquireCalls      {@code tryAcquire} calls sent through the batches
 * @param acquireStatements acquire statements those calls took
 * @param releaseCalls      {@code release(lease)} calls sent through the batches
 * @param releaseStatements release statements those calls took
 * @param cohortHandOffs    leases passed on in memory to a waiting call of the same owner
 */
public record BatchingStats(
        long acquireCalls, long acquireStatements, long releaseCalls, long releaseStatements, long cohortHandOffs) {

    static BatchingStats of(LeaseProbe probe) {
        long[] b = probe.batchCounts();
        return new BatchingStats(b[0], b[1], b[2], b[3], probe.cohortHandOffs());
    }

    /** {@return acquire calls per acquire statement; 0 if none was sent} */
    public double acquireCallsPerStatement() {
        return acquireStatements == 0 ? 0 : (double) acquireCalls / acquireStatements;
    }

    /** {@return release calls per release statement; 0 if none was sent} */
    public double releaseCallsPerStatement() {
        return releaseStatements == 0 ? 0 : (double) releaseCalls / releaseStatements;
    }
}
