package dev.holdfast.spring.boot;

import dev.holdfast.internal.Invariants;
import dev.holdfast.pessimistic.Blockers;
import dev.holdfast.pessimistic.LockTimeoutException;
import org.springframework.dao.CannotAcquireLockException;

/**
 * Spring's view of {@link LockTimeoutException}: a row lock's wait bound ran out (or a no-wait lock
 * found the row held). A {@link CannotAcquireLockException}, so a
 * {@code PessimisticLockingFailureException}, with the same message; the Holdfast exception (row,
 * bound, blockers) is the {@linkplain #getCause() cause}.
 */
public class RowLockTimeoutException extends CannotAcquireLockException {

    /**
     * Wraps {@code cause}, with its message.
     *
     * @param cause the Holdfast exception: the row, the wait bound and the blockers; not null
     */
    public RowLockTimeoutException(LockTimeoutException cause) {
        super(cause.getMessage(), cause);
    }

    @Override
    public LockTimeoutException getCause() {
        // never null: the constructor takes the cause
        return (LockTimeoutException) Invariants.nonNull(super.getCause(), "built with its cause");
    }

    /**
     * {@return the sessions that blocked the wait, or why they are unknown: {@link LockTimeoutException#blockers()}}
     */
    public Blockers blockers() {
        return getCause().blockers();
    }
}
