package dev.holdfast.spring.boot;

import dev.holdfast.internal.Invariants;
import dev.holdfast.pessimistic.offline.LockNotHeldException;
import org.springframework.dao.PessimisticLockingFailureException;

/**
 * Spring's view of {@link LockNotHeldException} and its subtypes: the presented lock id authorizes nothing
 * (expired, released, broken, forged, or another resource's or owner's). The Holdfast exception is
 * the {@linkplain #getCause() cause}.
 */
public class OfflineLockLostException extends PessimisticLockingFailureException {

    /**
     * Wraps {@code cause}, with its message.
     *
     * @param cause the Holdfast exception: why the lock id authorizes nothing; not null
     */
    public OfflineLockLostException(LockNotHeldException cause) {
        super(cause.getMessage(), cause);
    }

    @Override
    public LockNotHeldException getCause() {
        // never null: the constructor takes the cause
        return (LockNotHeldException) Invariants.nonNull(super.getCause(), "built with its cause");
    }
}
