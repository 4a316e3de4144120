package dev.holdfast.spring.boot.observation;

import dev.holdfast.internal.Arguments;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.pessimistic.DeadlockException;
import dev.holdfast.pessimistic.LockTimeoutException;
import dev.holdfast.pessimistic.LockWait;
import dev.holdfast.pessimistic.PessimisticLocks;
import dev.holdfast.pessimistic.RowRef;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

import java.time.Duration;

/**
 * Makes a {@link HoldfastObservation#PESSIMISTIC_LOCK} observation of every row lock of the {@link PessimisticLocks}
 * it observes (give it to {@link PessimisticLocks#observedBy}; the starter does): started just before the lock
 * statement and in scope while it waits (so its span is the parent of the JDBC spans under it), stopped after the
 * outcome is known, with the exception as its error. With a registry that has no handler (or
 * {@link ObservationRegistry#NOOP}) it makes nothing and allocates nothing.
 */
public final class PessimisticLockObservations implements PessimisticLocks.Observer {

    private static final HoldfastObservationConvention DEFAULT = new DefaultPessimisticLockObservationConvention();
    private static final Attempt NOT_OBSERVED = (waited, locked, failure) -> {};
    private static final LockWait NO_WAIT = LockWait.noWait();
    private static final LockWait SKIP_LOCKED = LockWait.skipLocked();

    private final ObservationRegistry registry;
    private final String database;
    private final @Nullable PessimisticLockObservationConvention convention;

    /**
     * Observations with the default convention.
     *
     * @param registry where the observations are made
     * @param dialect  the database of the observed locks, for {@code db.system}
     * @throws IllegalArgumentException if an argument is null
     */
    public PessimisticLockObservations(ObservationRegistry registry, Dialect dialect) {
        this(registry, dialect, null);
    }

    /**
     * Observations named and tagged by {@code convention}.
     *
     * @param registry   where the observations are made
     * @param dialect    the database of the observed locks, for {@code db.system}
     * @param convention replaces the default convention; null keeps it
     * @throws IllegalArgumentException if an argument other than {@code convention} is null
     */
    public PessimisticLockObservations(
            ObservationRegistry registry, Dialect dialect, @Nullable PessimisticLockObservationConvention convention) {
        this.registry = Arguments.notNull(registry, "registry");
        this.database = Arguments.notNull(dialect, "dialect").id();
        this.convention = convention;
    }

    /** Not called by {@link PessimisticLocks}: the observation begins in {@link #lockStarting}. */
    @Override
    public void lockEnded(
            RowRef row, LockWait wait, Duration waited, boolean locked, @Nullable RuntimeException failure) {}

    @Override
    public Attempt lockStarting(RowRef row, LockWait wait) {
        if (registry.isNoop()) {
            return NOT_OBSERVED;
        }
        HoldfastObservationContext context = new HoldfastObservationContext(
                HoldfastObservation.PESSIMISTIC_LOCK,
                waitOf(wait),
                row.toString(),
                row.table().value(),
                database);
        Observation observation = Observation.createNotStarted(convention, DEFAULT, () -> context, registry)
                .start();
        Observation.Scope scope = observation.openScope();
        return (waited, locked, failure) -> {
            context.outcome(outcome(locked, failure));
            if (failure != null) {
                observation.error(failure);
            }
            scope.close();
            observation.stop();
        };
    }

    private static String waitOf(LockWait wait) {
        return wait.equals(NO_WAIT) ? "no_wait" : wait.equals(SKIP_LOCKED) ? "skip_locked" : "bounded";
    }

    private static String outcome(boolean locked, @Nullable RuntimeException failure) {
        if (failure == null) {
            return locked ? "locked" : "absent";
        }
        return failure instanceof LockTimeoutException
                ? "timeout"
                : failure instanceof DeadlockException ? "deadlock" : "error";
    }
}
