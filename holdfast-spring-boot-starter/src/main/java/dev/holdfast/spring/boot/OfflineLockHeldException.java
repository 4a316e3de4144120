package dev.holdfast.spring.boot;

import dev.holdfast.internal.Invariants;
import dev.holdfast.pessimistic.offline.AlreadyLockedException;
import org.springframework.dao.CannotAcquireLockException;

/**
 * Spring's view of {@link AlreadyLockedException}: someone else holds the offline lock. A
 * {@link CannotAcquireLockException}, so a {@code PessimisticLockingFailureException}; the Holdfast
 * exception (owner, until when) is the {@linkplain #getCause() cause}.
 */
public class OfflineLockHeldException extends CannotAcquireLockException {

    /**
     * Wraps {@code cause}, with its message.
     *
     * @param cause the Holdfast exception: who holds the lock, and until when; not null
     */
    public OfflineLockHeldException(AlreadyLockedException cause) {
        super(cause.getMessage(), cause);
    }

    @Override
    public AlreadyLockedException getCause() {
        // never null: the constructor takes the cause
        return (AlreadyLockedException) Invariants.nonNull(super.getCause(), "built with its cause");
    }
}
