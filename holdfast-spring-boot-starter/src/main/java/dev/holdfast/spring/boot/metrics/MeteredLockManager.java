package dev.holdfast.spring.boot.metrics;

import dev.holdfast.internal.Arguments;
import dev.holdfast.pessimistic.offline.AlreadyLockedException;
import dev.holdfast.pessimistic.offline.ForeignLockException;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.pessimistic.offline.LockExpiredException;
import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.pessimistic.offline.LockManager;
import dev.holdfast.pessimistic.offline.LockNotHeldException;
import dev.holdfast.pessimistic.offline.Reacquired;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.jspecify.annotations.Nullable;

import java.time.Duration;
import java.util.function.Supplier;

/**
 * A {@link LockManager} that counts what happens to the calls of another one; the outcomes (and
 * exceptions) are the delegate's, unchanged.
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th></tr>
 *   <tr><td>{@value #ACQUISITIONS}</td><td>counter</td><td></td></tr>
 *   <tr><td>{@value #RELEASES}</td><td>counter</td><td></td></tr>
 *   <tr><td>{@value #EXTENSIONS}</td><td>counter</td><td></td></tr>
 *   <tr><td>{@value #REFUSALS}</td><td>counter</td><td>{@code operation} (acquire, check, release,
 *       extend), {@code reason} (already_locked, expired, other_resource, other_owner, no_lock)</td></tr>
 *   <tr><td>{@value #HELD}</td><td>gauge: live locks in the table, all servers together, read when
 *       the registry publishes (one query, capped at 10,000); only with a {@link JdbcLockManager}</td><td></td></tr>
 * </table>
 */
public final class MeteredLockManager implements LockManager {

    /** The name of the counter of offline locks taken (a reacquired lock included). */
    public static final String ACQUISITIONS = "holdfast.offline.lock.acquisitions";
    /** The name of the counter of offline locks released by their holder. */
    public static final String RELEASES = "holdfast.offline.lock.releases";
    /** The name of the counter of offline lock expiries extended. */
    public static final String EXTENSIONS = "holdfast.offline.lock.extensions";
    /** The name of the counter of refused offline lock calls, tagged {@code operation} and {@code reason}. */
    public static final String REFUSALS = "holdfast.offline.lock.refusals";
    /** The name of the gauge of live offline locks in the table, all servers together. */
    public static final String HELD = "holdfast.offline.locks.held";

    private static final int HELD_CAP = 10_000;

    private final LockManager delegate;
    private final MeterRegistry registry;
    private final Counter acquisitions;
    private final Counter releases;
    private final Counter extensions;

    /**
     * Decorates {@code delegate}, registering the meters in {@code registry} at once.
     *
     * @param delegate the lock manager that does the work; with a {@link JdbcLockManager} the
     *                 {@value #HELD} gauge is registered too
     * @param registry where the meters are registered
     * @throws IllegalArgumentException if an argument is null
     */
    public MeteredLockManager(LockManager delegate, MeterRegistry registry) {
        this(delegate, registry, delegate instanceof JdbcLockManager jdbc ? jdbc : null);
    }

    /**
     * Decorates {@code delegate}, registering the meters in {@code registry} at once.
     *
     * @param delegate the lock manager that does the work (e.g. a decorator of {@code store})
     * @param registry where the meters are registered
     * @param store    whose table the {@value #HELD} gauge counts; null: no gauge
     * @throws IllegalArgumentException if {@code delegate} or {@code registry} is null
     */
    public MeteredLockManager(LockManager delegate, MeterRegistry registry, @Nullable JdbcLockManager store) {
        this.delegate = Arguments.notNull(delegate, "delegate");
        this.registry = Arguments.notNull(registry, "registry");
        this.acquisitions =
                Counter.builder(ACQUISITIONS).description("Offline locks taken").register(registry);
        this.releases = Counter.builder(RELEASES)
                .description("Offline locks released by their holder")
                .register(registry);
        this.extensions = Counter.builder(EXTENSIONS)
                .description("Offline lock expiries extended")
                .register(registry);
        if (store != null) {
            heldLocks(store).bindTo(registry);
        }
    }

    /**
     * The {@value #HELD} gauge of {@code store} alone, for a registry to bind (a decorator has no store to count).
     *
     * @param store the lock manager whose table the gauge counts, with one query capped at 10,000 locks per read
     * @return a binder that registers the gauge; the gauge reads NaN while the database cannot be read
     * @throws IllegalArgumentException if {@code store} is null
     */
    public static MeterBinder heldLocks(JdbcLockManager store) {
        Arguments.notNull(store, "store");
        return registry -> Gauge.builder(HELD, store, MeteredLockManager::countHeld)
                .description("Live offline locks (all servers; capped at " + HELD_CAP + ")")
                .register(registry);
    }

    private static double countHeld(JdbcLockManager jdbc) {
        try {
            return jdbc.heldLocks(null, null, HELD_CAP).size();
        } catch (RuntimeException e) {
            return Double.NaN; // the database is unreachable: no value rather than a wrong one
        }
    }

    /** {@return the lock manager doing the work} */
    public LockManager delegate() {
        return delegate;
    }

    @Override
    public LockId tryLock(String type, String id) {
        return acquire(() -> delegate.tryLock(type, id));
    }

    @Override
    public LockId tryLock(String type, String id, String owner) {
        return acquire(() -> delegate.tryLock(type, id, owner));
    }

    @Override
    public LockId tryLock(String type, String id, String owner, Duration expiry) {
        return acquire(() -> delegate.tryLock(type, id, owner, expiry));
    }

    @Override
    public Reacquired reacquire(String type, String id, String owner) {
        return reacquire(() -> delegate.reacquire(type, id, owner));
    }

    /** Counted as an acquisition (a replaced own lock too) or a refusal. */
    @Override
    public Reacquired reacquire(String type, String id, String owner, Duration expiry) {
        return reacquire(() -> delegate.reacquire(type, id, owner, expiry));
    }

    private Reacquired reacquire(Supplier<Reacquired> call) {
        try {
            Reacquired lock = call.get();
            acquisitions.increment();
            return lock;
        } catch (AlreadyLockedException e) {
            refused("acquire", "already_locked");
            throw e;
        }
    }

    @Override
    public void checkLock(LockId lockId) {
        run("check", null, () -> delegate.checkLock(lockId));
    }

    @Override
    public void checkLock(LockId lockId, String type, String id) {
        run("check", null, () -> delegate.checkLock(lockId, type, id));
    }

    @Override
    public void checkLock(LockId lockId, String type, String id, String owner) {
        run("check", null, () -> delegate.checkLock(lockId, type, id, owner));
    }

    @Override
    public void releaseLock(LockId lockId) {
        run("release", releases, () -> delegate.releaseLock(lockId));
    }

    @Override
    public void releaseLock(LockId lockId, String owner) {
        run("release", releases, () -> delegate.releaseLock(lockId, owner));
    }

    @Override
    public void extendLockExpiration(LockId lockId, long incMillis) {
        run("extend", extensions, () -> delegate.extendLockExpiration(lockId, incMillis));
    }

    @Override
    public void extendLockExpiration(LockId lockId, Duration increment) {
        run("extend", extensions, () -> delegate.extendLockExpiration(lockId, increment));
    }

    @Override
    public void extendLockExpiration(LockId lockId, String owner, Duration increment) {
        run("extend", extensions, () -> delegate.extendLockExpiration(lockId, owner, increment));
    }

    private LockId acquire(Supplier<LockId> call) {
        try {
            LockId id = call.get();
            acquisitions.increment();
            return id;
        } catch (AlreadyLockedException e) {
            refused("acquire", "already_locked");
            throw e;
        }
    }

    private void run(String operation, @Nullable Counter success, Runnable call) {
        try {
            call.run();
        } catch (LockNotHeldException e) {
            refused(operation, reason(e));
            throw e;
        }
        if (success != null) {
            success.increment();
        }
    }

    private static String reason(LockNotHeldException e) {
        if (e instanceof LockExpiredException) {
            return "expired";
        }
        if (e instanceof ForeignLockException f) {
            return f.reason() == ForeignLockException.Reason.OTHER_RESOURCE ? "other_resource" : "other_owner";
        }
        return "no_lock";
    }

    private void refused(String operation, String reason) {
        Counter.builder(REFUSALS)
                .description("Offline lock calls refused")
                .tag("operation", operation)
                .tag("reason", reason)
                .register(registry)
                .increment();
    }
}
