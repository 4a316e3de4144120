package dev.holdfast.lease.internal;

import org.jspecify.annotations.Nullable;

import java.time.Instant;

/**
 * A release or renewal matched no grant of the caller, and why; the facade reports it as a
 * {@code LeaseNotHeldException} (or {@code LeaseExpiredException}). Carries no stack trace: it is
 * translated before it leaves the library.
 */
public final class NotHeld extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** Why: the same cases, in the same order, as {@code LeaseNotHeldException.Reason}. */
    public enum Why {
        NO_SUCH_LEASE,
        RELEASED,
        BROKEN,
        EXPIRED,
        GRANTED_AGAIN,
        OTHER_OWNER,
        NO_SUCH_GRANT
    }

    private final String name;
    private final String message;
    private final Why why;
    private final transient @Nullable LeaseRow current;
    private final @Nullable String brokenBy;
    private final @Nullable Instant brokenAt;

    NotHeld(
            String name,
            String message,
            Why why,
            @Nullable LeaseRow current,
            @Nullable String brokenBy,
            @Nullable Instant brokenAt) {
        super(message, null, false, false);
        this.name = name;
        this.message = message;
        this.why = why;
        this.current = current;
        this.brokenBy = brokenBy;
        this.brokenAt = brokenAt;
    }

    NotHeld(String name, String message, Why why, @Nullable LeaseRow current) {
        this(name, message, why, current, null, null);
    }

    public String name() {
        return name;
    }

    /** What happened, for the public exception's message. */
    public String message() {
        return message;
    }

    public Why why() {
        return why;
    }

    /** Whether the caller did hold it, but the grant ran out first. */
    public boolean expired() {
        return why == Why.EXPIRED || why == Why.GRANTED_AGAIN;
    }

    /** The row as it was read when this was diagnosed, or null if there is none. */
    public @Nullable LeaseRow current() {
        return current;
    }

    /** Who force-released it ({@link Why#BROKEN}), or null if not named. */
    public @Nullable String brokenBy() {
        return brokenBy;
    }

    /** When it was force-released ({@link Why#BROKEN}), else null. */
    public @Nullable Instant brokenAt() {
        return brokenAt;
    }
}
