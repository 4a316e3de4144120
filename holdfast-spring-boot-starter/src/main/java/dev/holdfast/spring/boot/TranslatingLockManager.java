package dev.holdfast.spring.boot;

import dev.holdfast.internal.Arguments;
import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.pessimistic.offline.LockManager;
import dev.holdfast.pessimistic.offline.Reacquired;

import java.time.Duration;
import java.util.function.Supplier;

/**
 * A {@link LockManager} whose calls throw what a {@link HoldfastExceptionTranslator} makes of the exceptions of the
 * lock manager it decorates: {@link OfflineLockHeldException}, {@link OfflineLockLostException} and Spring's other
 * {@code DataAccessException}s, the Holdfast exception as their cause; an exception it does not translate (a bad
 * argument, a malformed lock id) is thrown as it is.
 */
public final class TranslatingLockManager implements LockManager {

    private final LockManager delegate;
    private final HoldfastExceptionTranslator translator;

    /**
     * Decorates {@code delegate}.
     *
     * @param delegate   the lock manager whose exceptions are translated
     * @param translator what makes Spring's exceptions of them
     * @throws IllegalArgumentException if an argument is null
     */
    public TranslatingLockManager(LockManager delegate, HoldfastExceptionTranslator translator) {
        this.delegate = Arguments.notNull(delegate, "delegate");
        this.translator = Arguments.notNull(translator, "translator");
    }

    @Override
    public LockId tryLock(String type, String id) {
        return translated(() -> delegate.tryLock(type, id));
    }

    @Override
    public LockId tryLock(String type, String id, String owner) {
        return translated(() -> delegate.tryLock(type, id, owner));
    }

    @Override
    public LockId tryLock(String type, String id, String owner, Duration expiry) {
        return translated(() -> delegate.tryLock(type, id, owner, expiry));
    }

    @Override
    public Reacquired reacquire(String type, String id, String owner) {
        return translated(() -> delegate.reacquire(type, id, owner));
    }

    @Override
    public Reacquired reacquire(String type, String id, String owner, Duration expiry) {
        return translated(() -> delegate.reacquire(type, id, owner, expiry));
    }

    @Override
    public void checkLock(LockId lockId) {
        translated(() -> delegate.checkLock(lockId));
    }

    @Override
    public void checkLock(LockId lockId, String type, String id) {
        translated(() -> delegate.checkLock(lockId, type, id));
    }

    @Override
    public void checkLock(LockId lockId, String type, String id, String owner) {
        translated(() -> delegate.checkLock(lockId, type, id, owner));
    }

    @Override
    public void releaseLock(LockId lockId) {
        translated(() -> delegate.releaseLock(lockId));
    }

    @Override
    public void releaseLock(LockId lockId, String owner) {
        translated(() -> delegate.releaseLock(lockId, owner));
    }

    @Override
    public void extendLockExpiration(LockId lockId, long incMillis) {
        translated(() -> delegate.extendLockExpiration(lockId, incMillis));
    }

    @Override
    public void extendLockExpiration(LockId lockId, Duration increment) {
        translated(() -> delegate.extendLockExpiration(lockId, increment));
    }

    @Override
    public void extendLockExpiration(LockId lockId, String owner, Duration increment) {
        translated(() -> delegate.extendLockExpiration(lockId, owner, increment));
    }

    private <T> T translated(Supplier<T> call) {
        try {
            return call.get();
        } catch (RuntimeException e) {
            throw translator.translate(e);
        }
    }

    private void translated(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            throw translator.translate(e);
        }
    }
}
