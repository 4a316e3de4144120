package dev.holdfast.lease.internal;

import org.jspecify.annotations.Nullable;

import java.time.Instant;

/**
 * A blocking acquire was not granted within its bound; nothing is held. The facade reports it as a
 * {@code LeaseTimeoutException}, with what the call saw when it gave up. Carries no stack trace: it
 * is translated before it leaves the library.
 */
public final class WaitTimedOut extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int attempts;
    private final transient Seen seen;

    WaitTimedOut(int attempts, Seen seen) {
        super("not granted within the bound after " + attempts + " attempts", null, false, false);
        this.attempts = attempts;
        this.seen = seen;
    }

    /** How many times the database was asked. */
    public int attempts() {
        return attempts;
    }

    /** Who held the lease and how many waited ahead when the call gave up, or why that is unknown. */
    public Seen seen() {
        return seen;
    }

    /**
     * What one read on the timeout path saw ({@link TimeoutLook}).
     *
     * @param holder         the live grant, null if the lease was free (or unknown)
     * @param waitersAhead   live waiters queued before the caller (all live ones if it had no entry); -1 if unknown
     * @param at             the database's time of the read; null if unknown
     * @param unknownBecause null if the read succeeded; else why nothing is known
     */
    public record Seen(
            @Nullable LeaseRow holder,
            int waitersAhead,
            @Nullable Instant at,
            @Nullable String unknownBecause) {

        static Seen unknown(String because) {
            return new Seen(null, -1, null, because);
        }
    }
}
