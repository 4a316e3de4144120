package dev.holdfast.lease;

import java.time.Duration;

/** Benchmarks: the package-private batching settings of {@link LeaseService.Builder}, for benchmarks outside this package. */
public final class BatchingSettings {
    private BatchingSettings() {
    }

    /**
     * Batching with acquires and releases sharing {@code inFlight} statements, a new batch waiting up to
     * {@code linger} for the callers the last batches answered.
     */
    public static LeaseService.Builder lingering(LeaseService.Builder builder, int inFlight, int overlapAt, Duration linger) {
        return builder.batching(true).batchesInFlight(inFlight, overlapAt).batchesInLockstep(linger);
    }
}
