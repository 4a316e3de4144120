package dev.holdfast.spring.boot.observation;

import dev.holdfast.internal.Arguments;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.pessimistic.offline.AlreadyLockedException;
import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.pessimistic.offline.LockManager;
import dev.holdfast.pessimistic.offline.Reacquired;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

import java.time.Duration;
import java.util.function.Supplier;

/**
 * A {@link LockManager} that makes a {@link HoldfastObservation#OFFLINE_LOCK} observation of every lock it takes
 * ({@code tryLock}, {@code reacquire}) through another one; every call, and its outcome or exception, is the
 * delegate's, unchanged. Checks, extensions and releases are delegated unobserved. With a registry that has no
 * handler (or {@link ObservationRegistry#NOOP}) the calls go straight to the delegate.
 */
public final class ObservedLockManager implements LockManager {

    private static final HoldfastObservationConvention DEFAULT = new DefaultOfflineLockObservationConvention();

    private final LockManager delegate;
    private final ObservationRegistry registry;
    private final String database;
    private final @Nullable OfflineLockObservationConvention convention;

    /**
     * Observations with the default convention.
     *
     * @param delegate the lock manager whose {@code tryLock} and {@code reacquire} calls are observed
     * @param registry where the observations are made
     * @param dialect  the database of {@code delegate}, for {@code db.system}
     * @throws IllegalArgumentException if an argument is null
     */
    public ObservedLockManager(LockManager delegate, ObservationRegistry registry, Dialect dialect) {
        this(delegate, registry, dialect, null);
    }

    /**
     * Observations named and tagged by {@code convention}.
     *
     * @param delegate   the lock manager whose {@code tryLock} and {@code reacquire} calls are observed
     * @param registry   where the observations are made
     * @param dialect    the database of {@code delegate}, for {@code db.system}
     * @param convention replaces the default convention; null keeps it
     * @throws IllegalArgumentException if an argument other than {@code convention} is null
     */
    public ObservedLockManager(
            LockManager delegate,
            ObservationRegistry registry,
            Dialect dialect,
            @Nullable OfflineLockObservationConvention convention) {
        this.delegate = Arguments.notNull(delegate, "delegate");
        this.registry = Arguments.notNull(registry, "registry");
        this.database = Arguments.notNull(dialect, "dialect").id();
        this.convention = convention;
    }

    /** {@return the lock manager doing the work} */
    public LockManager delegate() {
        return delegate;
    }

    @Override
    public LockId tryLock(String type, String id) {
        return observed("try_lock", type, id, () -> delegate.tryLock(type, id));
    }

    @Override
    public LockId tryLock(String type, String id, String owner) {
        return observed("try_lock", type, id, () -> delegate.tryLock(type, id, owner));
    }

    @Override
    public LockId tryLock(String type, String id, String owner, Duration expiry) {
        return observed("try_lock", type, id, () -> delegate.tryLock(type, id, owner, expiry));
    }

    @Override
    public Reacquired reacquire(String type, String id, String owner) {
        return observed("reacquire", type, id, () -> delegate.reacquire(type, id, owner));
    }

    @Override
    public Reacquired reacquire(String type, String id, String owner, Duration expiry) {
        return observed("reacquire", type, id, () -> delegate.reacquire(type, id, owner, expiry));
    }

    @Override
    public void checkLock(LockId lockId) {
        delegate.checkLock(lockId);
    }

    @Override
    public void checkLock(LockId lockId, String type, String id) {
        delegate.checkLock(lockId, type, id);
    }

    @Override
    public void checkLock(LockId lockId, String type, String id, String owner) {
        delegate.checkLock(lockId, type, id, owner);
    }

    @Override
    public void releaseLock(LockId lockId) {
        delegate.releaseLock(lockId);
    }

    @Override
    public void releaseLock(LockId lockId, String owner) {
        delegate.releaseLock(lockId, owner);
    }

    @Override
    public void extendLockExpiration(LockId lockId, long incMillis) {
        delegate.extendLockExpiration(lockId, incMillis);
    }

    @Override
    public void extendLockExpiration(LockId lockId, Duration increment) {
        delegate.extendLockExpiration(lockId, increment);
    }

    @Override
    public void extendLockExpiration(LockId lockId, String owner, Duration increment) {
        delegate.extendLockExpiration(lockId, owner, increment);
    }

    private <T> T observed(String operation, @Nullable String type, @Nullable String id, Supplier<T> call) {
        if (registry.isNoop()) {
            return call.get();
        }
        HoldfastObservationContext context = new HoldfastObservationContext(
                HoldfastObservation.OFFLINE_LOCK, operation, type + ":" + id, String.valueOf(type), database);
        Observation observation = Observation.createNotStarted(convention, DEFAULT, () -> context, registry)
                .start();
        try (Observation.Scope scope = observation.openScope()) {
            T result = call.get();
            context.outcome("acquired");
            return result;
        } catch (RuntimeException e) {
            context.outcome(e instanceof AlreadyLockedException ? "refused" : "error");
            observation.error(e);
            throw e;
        } finally {
            observation.stop();
        }
    }
}
