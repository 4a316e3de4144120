package dev.holdfast.benchmarks;

import dev.holdfast.lease.Batching;
import dev.holdfast.lease.LeaseService;

/** Benchmarks: the package-private batching settings of {@link LeaseService.Builder}, for benchmarks outside this package. */
public final class BatchingSettings {
    private BatchingSettings() {}

    /** Concurrent batching with {@code inFlight} statements of each kind, another starting once {@code overlapAt} calls wait. */
    public static LeaseService.Builder concurrent(LeaseService.Builder builder, int inFlight, int overlapAt) {
        return LeaseInternals.tune(builder.batching(Batching.CONCURRENT), t -> t.batchesInFlight(inFlight, overlapAt));
    }
}
