package dev.holdfast.benchmarks;

import dev.holdfast.lease.LeaseService;
import dev.holdfast.lease.Batching;
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
        return builder.batching(Batching.lockstep(linger)).tune(t -> t.batchesInFlight(inFlight, overlapAt));
    }

    /** Concurrent batching with {@code inFlight} statements of each kind, another starting once {@code overlapAt} calls wait. */
    public static LeaseService.Builder concurrent(LeaseService.Builder builder, int inFlight, int overlapAt) {
        return builder.batching(Batching.CONCURRENT).tune(t -> t.batchesInFlight(inFlight, overlapAt));
    }
}
