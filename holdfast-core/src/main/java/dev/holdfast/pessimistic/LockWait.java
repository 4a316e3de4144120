package dev.holdfast.pessimistic;

import java.time.Duration;
import java.util.Objects;

/**
 * How long a pessimistic lock may wait for a row another transaction holds.
 *
 * <ul>
 *   <li>{@link #atMost(Duration)}: wait up to a bound, then fail with {@link LockTimeoutException};</li>
 *   <li>{@link #noWait()}: fail at once if the row is taken;</li>
 *   <li>{@link #skipLocked()}: do not wait and do not fail: a taken row is simply not locked.</li>
 * </ul>
 *
 * The bound holds on every supported database for the whole lock statement, whatever the database
 * waits for inside it: several transactions that share-lock the row (as a foreign-key insert of a
 * child row does to its parent) or pass it from one to the next, or a lock on the whole table
 * ({@code LOCK TABLE}, an {@code ALTER TABLE} or one queued behind a long transaction). It holds
 * for fractions of a second on MariaDB and for a zero bound on H2 (where {@code LOCK_TIMEOUT 0}
 * would mean "the default"). No-wait and skip-locked never wait for a table lock either: a locked
 * table fails both at once with {@link LockTimeoutException} (a table cannot be skipped).
 */
public final class LockWait {

    /** Longest bound accepted. A row lock held longer than this is a design problem, not a wait. */
    public static final Duration MAX = Duration.ofMinutes(10);

    enum Mode {
        BOUNDED,
        NO_WAIT,
        SKIP_LOCKED
    }

    private static final LockWait NO_WAIT = new LockWait(Mode.NO_WAIT, Duration.ZERO);
    private static final LockWait SKIP_LOCKED = new LockWait(Mode.SKIP_LOCKED, Duration.ZERO);

    private final Mode mode;
    private final Duration bound;

    private LockWait(Mode mode, Duration bound) {
        this.mode = mode;
        this.bound = bound;
    }

    /**
     * Waits at most {@code bound}, rounded up to whole milliseconds. A zero bound is
     * {@link #noWait()}.
     *
     * @param bound the longest wait for the row; zero to {@link #MAX}
     * @return a bounded wait, or {@link #noWait()} for a zero bound
     * @throws IllegalArgumentException if {@code bound} is null, negative or longer than {@link #MAX}
     */
    public static LockWait atMost(Duration bound) {
        if (bound == null) {
            throw new IllegalArgumentException("lock wait bound must not be null");
        }
        if (bound.isNegative()) {
            throw new IllegalArgumentException("lock wait bound must not be negative, was " + bound);
        }
        if (bound.compareTo(MAX) > 0) {
            throw new IllegalArgumentException("lock wait bound " + bound + " is longer than the maximum " + MAX);
        }
        if (bound.isZero()) {
            return NO_WAIT;
        }
        long millis = bound.toMillis() + (bound.minusMillis(bound.toMillis()).isZero() ? 0 : 1);
        return new LockWait(Mode.BOUNDED, Duration.ofMillis(millis));
    }

    /**
     * {@return a wait that fails at once with {@link LockTimeoutException} if another transaction
     * holds the row, or holds or waits for a lock on its table that a row lock must wait for}
     */
    public static LockWait noWait() {
        return NO_WAIT;
    }

    /**
     * {@return a wait that never waits and never fails for a held row: the row is left out of the
     * result instead} A locked table cannot be skipped: like {@link #noWait()}, it fails at once
     * with {@link LockTimeoutException}, and the transaction is rolled back.
     */
    public static LockWait skipLocked() {
        return SKIP_LOCKED;
    }

    Mode mode() {
        return mode;
    }

    /** {@return the bound, in whole milliseconds; zero for no-wait and skip-locked} */
    public Duration bound() {
        return bound;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LockWait other && mode == other.mode && bound.equals(other.bound);
    }

    @Override
    public int hashCode() {
        return Objects.hash(mode, bound);
    }

    @Override
    public String toString() {
        return switch (mode) {
            case BOUNDED -> "at most " + bound.toMillis() + " ms";
            case NO_WAIT -> "no wait";
            case SKIP_LOCKED -> "skip locked";
        };
    }
}
