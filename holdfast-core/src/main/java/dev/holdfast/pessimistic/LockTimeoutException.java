package dev.holdfast.pessimistic;

import org.jspecify.annotations.Nullable;

import java.time.Duration;

/**
 * A row lock waited as long as its {@link LockWait} allowed, or a {@link LockWait#noWait()} or
 * {@link LockWait#skipLocked()} lock found the table locked (or, for no-wait, the row held). The
 * transaction has been rolled back. {@link #blockers()} names the sessions that blocked the wait,
 * or says why they are unknown; the message ends with them.
 */
public class LockTimeoutException extends RowLockException {

    /** How the lock was allowed to wait. */
    private final LockWait wait;
    /** The sessions that blocked the wait, or why they are unknown. */
    private final Blockers blockers;

    LockTimeoutException(RowRef row, LockWait wait, Duration waited, @Nullable Throwable cause, Blockers blockers) {
        super(message(row, wait, waited) + "; " + blockers, row, waited, cause);
        this.wait = wait;
        this.blockers = blockers;
    }

    private static String message(RowRef row, LockWait wait, Duration waited) {
        String what = switch (wait.mode()) {
            case NO_WAIT -> row + " or its table is locked by another transaction (no wait)";
            case SKIP_LOCKED ->
                "The table of " + row + " is locked by another transaction"
                        + " (skip locked skips locked rows, not a locked table)";
            case BOUNDED ->
                "Lock wait on " + row + " exceeded its bound of " + wait.bound().toMillis() + " ms after "
                        + waited.toMillis() + " ms";
        };
        return what + "; the transaction was rolled back";
    }

    /** {@return how the lock was allowed to wait: a bound, no wait, or skip locked} */
    public LockWait lockWait() {
        return wait;
    }

    /** {@return the bound that ran out; zero for a no-wait or skip-locked lock} */
    public Duration bound() {
        return wait.bound();
    }

    /**
     * {@return the sessions that blocked the wait, as the database showed them shortly before the
     * bound ran out ({@link PessimisticLocks} explains how and when); or why they are unknown} They
     * are always unknown for a no-wait or skip-locked lock, which does not wait.
     */
    public Blockers blockers() {
        return blockers;
    }
}
