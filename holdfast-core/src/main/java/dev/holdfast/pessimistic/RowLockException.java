package dev.holdfast.pessimistic;

import dev.holdfast.HoldfastException;
import org.jspecify.annotations.Nullable;

import java.time.Duration;

/**
 * A pessimistic row lock could not be taken. Holdfast has already rolled the caller's transaction
 * back when this is thrown, on every database, so no later {@code commit()} can appear to keep work
 * done before the lock (PostgreSQL would otherwise report success for a commit of an aborted
 * transaction). Retry the whole unit of work.
 */
public abstract class RowLockException extends HoldfastException {

    /** The row that was being locked. */
    private final RowRef row;
    /** How long the lock statement ran before it failed. */
    private final Duration waited;

    RowLockException(String message, RowRef row, Duration waited, @Nullable Throwable cause) {
        super(message, cause);
        this.row = row;
        this.waited = waited;
    }

    /** {@return the row that was being locked} */
    public RowRef row() {
        return row;
    }

    /** {@return how long the lock statement ran before it failed} */
    public Duration waited() {
        return waited;
    }

    /** {@return true, always: the transaction was rolled back before this was thrown} */
    public boolean transactionRolledBack() {
        return true;
    }
}
