package dev.holdfast.pessimistic;

import org.jspecify.annotations.Nullable;

import java.time.Duration;

/**
 * A row lock waited as long as its {@link LockWait} allowed, or a {@link LockWait#noWait()} or
 * {@link LockWait#skipLocked()} lock found the table locked (or, for no-wait, the row held). The
 * transaction has been rolled back.
 */
public class LockTimeoutException extends RowLockException {

    private final LockWait wait;

    LockTimeoutException(RowRef row, LockWait wait, Duration waited, @Nullable Throwable cause) {
        super(message(row, wait, waited), row, waited, cause);
        this.wait = wait;
    }

    private static String message(RowRef row, LockWait wait, Duration waited) {
        String what = switch (wait.mode()) {
            case NO_WAIT -> row + " or its table is locked by another transaction (no wait)";
            case SKIP_LOCKED -> "The table of " + row + " is locked by another transaction"
                    + " (skip locked skips locked rows, not a locked table)";
            case BOUNDED -> "Lock wait on " + row + " exceeded its bound of " + wait.bound().toMillis()
                    + " ms after " + waited.toMillis() + " ms";
        };
        return what + "; the transaction was rolled back";
    }

    /** How the lock was allowed to wait: a bound, no wait, or skip locked. */
    public LockWait lockWait() {
        return wait;
    }

    /** The bound that ran out; zero for a no-wait or skip-locked lock. */
    public Duration bound() {
        return wait.bound();
    }
}
