package dev.holdfast.spring.boot.observation;

import dev.holdfast.internal.Arguments;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.optimistic.StaleRow;
import dev.holdfast.optimistic.VersionConflictException;
import dev.holdfast.spring.boot.VersionConflictListener;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Makes a {@link HoldfastObservation#VERSION_CONFLICT} observation of every stale row of a version conflict: the
 * MVC conflict handler tells it of every conflict it answers; call {@link #record} for conflicts handled elsewhere.
 * The observation is an event: started and stopped at once, as a child of the observation in scope (the request's).
 */
public final class VersionConflictObservations implements VersionConflictListener {

    private static final HoldfastObservationConvention DEFAULT = new DefaultVersionConflictObservationConvention();

    private final ObservationRegistry registry;
    private final String database;
    private final @Nullable VersionConflictObservationConvention convention;

    /**
     * Observations with the default convention.
     *
     * @param registry where the observations are made
     * @param dialect  the database the conflicts come from, for {@code db.system}
     * @throws IllegalArgumentException if an argument is null
     */
    public VersionConflictObservations(ObservationRegistry registry, Dialect dialect) {
        this(registry, dialect, null);
    }

    /**
     * Observations named and tagged by {@code convention}.
     *
     * @param registry   where the observations are made
     * @param dialect    the database the conflicts come from, for {@code db.system}
     * @param convention replaces the default convention; null keeps it
     * @throws IllegalArgumentException if an argument other than {@code convention} is null
     */
    public VersionConflictObservations(
            ObservationRegistry registry, Dialect dialect, @Nullable VersionConflictObservationConvention convention) {
        this.registry = Arguments.notNull(registry, "registry");
        this.database = Arguments.notNull(dialect, "dialect").id();
        this.convention = convention;
    }

    @Override
    public void onConflict(VersionConflictException conflict) {
        record(conflict);
    }

    /**
     * One observation per stale row of {@code conflict}; none with a registry that has no handler.
     *
     * @param conflict the conflict, whose exception is each observation's error
     */
    public void record(VersionConflictException conflict) {
        if (registry.isNoop()) {
            return;
        }
        for (StaleRow row : conflict.staleRows()) {
            HoldfastObservationContext context = new HoldfastObservationContext(
                    HoldfastObservation.VERSION_CONFLICT,
                    "check",
                    row.entity() + ":" + row.id(),
                    row.entity(),
                    database);
            context.outcome(row.deleted() ? "deleted" : "changed");
            Observation observation = Observation.createNotStarted(convention, DEFAULT, () -> context, registry)
                    .start();
            observation.error(conflict);
            observation.stop();
        }
    }
}
