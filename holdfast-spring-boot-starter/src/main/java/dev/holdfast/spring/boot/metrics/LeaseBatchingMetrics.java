package dev.holdfast.spring.boot.metrics;

import dev.holdfast.lease.BatchingStats;
import dev.holdfast.lease.LeaseService;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import java.util.function.ToDoubleFunction;

/**
 * What batching and cohort hand-off of a {@link LeaseService} did ({@link LeaseService#batchingStats()}), as
 * function counters read at each publish: {@code holdfast.lease.batch.calls} and {@code holdfast.lease.batch.statements}
 * (tag {@code kind} = acquire, release) and {@code holdfast.lease.cohort.handoffs} (leases passed on in memory).
 * Calls divided by statements is the calls per commit: 1.0 means batching never engaged; cohort hand-offs that
 * stay at 0 while callers wait mean cohort hand-off passes nothing on (each thread its own owner, for example).
 */
public final class LeaseBatchingMetrics implements MeterBinder {

    /** The name of the counters of lease calls sent through the batches, tagged {@code kind} (acquire, release). */
    public static final String CALLS = "holdfast.lease.batch.calls";
    /** The name of the counters of statements the batched lease calls took, tagged {@code kind} (acquire, release). */
    public static final String STATEMENTS = "holdfast.lease.batch.statements";
    /** The name of the counter of leases passed on in memory to a waiting call of the same owner. */
    public static final String COHORT_HANDOFFS = "holdfast.lease.cohort.handoffs";

    private final LeaseService leases;

    /**
     * Meters {@code leases} once bound to a registry.
     *
     * @param leases the lease service whose {@link LeaseService#batchingStats()} the counters read at each publish
     */
    public LeaseBatchingMetrics(LeaseService leases) {
        this.leases = leases;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        counter(registry, CALLS, "acquire", "Lease calls sent through the batches", BatchingStats::acquireCalls);
        counter(registry, CALLS, "release", "Lease calls sent through the batches", BatchingStats::releaseCalls);
        counter(
                registry,
                STATEMENTS,
                "acquire",
                "Statements the batched lease calls took",
                BatchingStats::acquireStatements);
        counter(
                registry,
                STATEMENTS,
                "release",
                "Statements the batched lease calls took",
                BatchingStats::releaseStatements);
        FunctionCounter.builder(COHORT_HANDOFFS, leases, l -> l.batchingStats().cohortHandOffs())
                .description("Leases passed on in memory to a waiting call of the same owner")
                .register(registry);
    }

    private void counter(
            MeterRegistry registry,
            String name,
            String kind,
            String description,
            ToDoubleFunction<BatchingStats> value) {
        FunctionCounter.builder(name, leases, l -> value.applyAsDouble(l.batchingStats()))
                .description(description)
                .tag("kind", kind)
                .register(registry);
    }
}
