package dev.holdfast.lease.internal;

/**
 * A blocking acquire was not granted within its bound; nothing is held. The facade reports it as a
 * {@code LeaseTimeoutException}. Carries no stack trace: it is translated before it leaves the library.
 */
public final class WaitTimedOut extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int attempts;

    WaitTimedOut(int attempts) {
        super("not granted within the bound after " + attempts + " attempts", null, false, false);
        this.attempts = attempts;
    }

    /** How many times the database was asked. */
    public int attempts() {
        return attempts;
    }
}
