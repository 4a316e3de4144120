package dev.holdfast.pessimistic;

import java.time.Duration;

/**
 * The database chose this transaction as the victim of a deadlock while it locked a row. The
 * transaction has been rolled back (H2 claims so but does not on {@code SELECT … FOR UPDATE}; Holdfast
 * does it). {@link PessimisticLocks#forUpdateAll} never deadlocks with itself.
 */
public class DeadlockException extends RowLockException {

    DeadlockException(RowRef row, Duration waited, Throwable cause) {
        super(
                "Chosen as deadlock victim while locking " + row + " after " + waited.toMillis()
                        + " ms; the transaction was rolled back",
                row,
                waited,
                cause);
    }
}
