package dev.holdfast.spring.boot;

import dev.holdfast.internal.Arguments;
import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.pessimistic.offline.LockManager;
import dev.holdfast.pessimistic.offline.Reacquired;

import java.time.Duration;

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
        return translator.translating(() -> delegate.tryLock(type, id));
    }

    @Override
    public LockId tryLock(String type, String id, String owner) {
        return translator.translating(() -> delegate.tryLock(type, id, owner));
    }

    @Override
    public LockId tryLock(String type, String id, String owner, Duration expiry) {
        return translator.translating(() -> delegate.tryLock(type, id, owner, expiry));
    }

    @Override
    public Reacquired reacquire(String type, String id, String owner) {
        return translator.translating(() -> delegate.reacquire(type, id, owner));
    }

    @Override
    public Reacquired reacquire(String type, String id, String owner, Duration expiry) {
        return translator.translating(() -> delegate.reacquire(type, id, owner, expiry));
    }

    @Override
    public void checkLock(LockId lockId) {
        translator.translating(() -> delegate.checkLock(lockId));
    }

    @Override
    public void checkLock(LockId lockId, String type, String id) {
        translator.translating(() -> delegate.checkLock(lockId, type, id));
    }

    @Override
    public void checkLock(LockId lockId, String type, String id, String owner) {
        translator.translating(() -> delegate.checkLock(lockId, type, id, owner));
    }

    @Override
    public void releaseLock(LockId lockId) {
        translator.translating(() -> delegate.releaseLock(lockId));
    }

    @Override
    public void releaseLock(LockId lockId, String owner) {
        translator.translating(() -> delegate.releaseLock(lockId, owner));
    }

    @Override
    public void extendLockExpiration(LockId lockId, long incMillis) {
        translator.translating(() -> delegate.extendLockExpiration(lockId, incMillis));
    }

    @Override
    public void extendLockExpiration(LockId lockId, Duration increment) {
        translator.translating(() -> delegate.extendLockExpiration(lockId, increment));
    }

    @Override
    public void extendLockExpiration(LockId lockId, String owner, Duration increment) {
        translator.translating(() -> delegate.extendLockExpiration(lockId, owner, increment));
    }
}
