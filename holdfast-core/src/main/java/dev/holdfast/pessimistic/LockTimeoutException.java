package dev.holdfast.pessimistic;

import java.time.Duration;

/**
 * A row lock waited as long as its {@link LockWait} allowed, or a {@link LockWait#noWait()} or
 * {@link LockWait#skipLocked()} lock found the table locked (or, for no-wait, the row held). The
 * transaction has been rolled back.
 */
public class LockTimeoutException extends RowLockException {

    private final Duration bound;

    LockTimeoutException(RowRef row, Duration bound, Duration waited, Throwable cause) {
        super(message(row, bound, waited), row, waited, cause);
        this.bound = bound;
    }

    private static String message(RowRef row, Duration bound, Duration waited) {
        String what = bound.isZero()
                ? row + " or its table is locked by another transaction (no wait)"
                : "Lock wait on " + row + " exceeded its bound of " + bound.toMillis()
                        + " ms after " + waited.toMillis() + " ms";
        return what + "; the transaction was rolled back";
    }

    /** The bound that ran out; zero for a no-wait lock. */
    public Duration bound() {
        return bound;
    }
}
