package dev.holdfast.spring.boot;

import dev.holdfast.internal.Invariants;
import dev.holdfast.optimistic.VersionConflictException;
import org.springframework.dao.OptimisticLockingFailureException;

/**
 * Spring's view of {@link VersionConflictException}: a versioned write or check found that someone
 * changed or deleted the row since the caller read it; nothing was written. Code that catches
 * {@link OptimisticLockingFailureException} (Spring Retry, {@code @Retryable}, existing handlers) keeps
 * working. The Holdfast exception, with every stale row, is the {@linkplain #getCause() cause}.
 */
public class StaleVersionException extends OptimisticLockingFailureException {

    /**
     * Wraps {@code cause}, with its message.
     *
     * @param cause the Holdfast exception, with every stale row; not null
     */
    public StaleVersionException(VersionConflictException cause) {
        super(cause.getMessage(), cause);
    }

    @Override
    public VersionConflictException getCause() {
        // never null: the constructor takes the cause
        return (VersionConflictException) Invariants.nonNull(super.getCause(), "built with its cause");
    }
}
