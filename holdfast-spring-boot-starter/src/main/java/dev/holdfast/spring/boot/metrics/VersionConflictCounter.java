package dev.holdfast.spring.boot.metrics;

import dev.holdfast.optimistic.StaleRow;
import dev.holdfast.optimistic.VersionConflictException;
import dev.holdfast.spring.boot.VersionConflictListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Counts version conflicts: {@code holdfast.version.conflicts}, one per stale row, tagged {@code entity}
 * and {@code kind} ({@code changed} or {@code deleted}). The MVC conflict handler records every conflict
 * it answers; call {@link #record} for conflicts handled elsewhere (a retry loop, a scheduled job).
 */
public class VersionConflictCounter implements VersionConflictListener {

    private final MeterRegistry registry;

    /**
     * Counts into {@code registry}.
     *
     * @param registry where the {@code holdfast.version.conflicts} counters are registered, one per entity and kind
     */
    public VersionConflictCounter(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void onConflict(VersionConflictException e) {
        record(e);
    }

    /**
     * Counts {@code e}: one for each of its stale rows.
     *
     * @param e the conflict to count
     */
    public void record(VersionConflictException e) {
        for (StaleRow row : e.staleRows()) {
            Counter.builder("holdfast.version.conflicts")
                    .description("Stale versions found (one per stale row)")
                    .tag("entity", row.entity())
                    .tag("kind", row.deleted() ? "deleted" : "changed")
                    .register(registry)
                    .increment();
        }
    }
}
