package dev.holdfast.lease;

import org.jspecify.annotations.Nullable;

import java.time.Instant;
import java.util.Optional;

/**
 * A release or renewal by a caller that does not hold the lease: another owner holds it, it was
 * already released, an operator broke it (who and when, if named), or it never existed; {@link #reason()}
 * says which. Nothing was changed.
 * The subclass {@link LeaseExpiredException} says the caller <em>did</em> hold it but the grant ran
 * out first: its critical section may have overlapped another holder's.
 */
public class LeaseNotHeldException extends LeaseException {

    /** Why the caller does not hold the lease. */
    public enum Reason {
        /** There is no lease of that name. */
        NO_SUCH_LEASE,
        /** The caller released it already. */
        RELEASED,
        /** An operator broke it ({@link Leases#forceRelease(String, String)}): see {@link #brokenBy()}, {@link #brokenAt()}. */
        BROKEN,
        /** The caller's grant ran out (a {@link LeaseExpiredException}). */
        EXPIRED,
        /** The caller's grant ran out and the lease was granted again since (a {@link LeaseExpiredException}). */
        GRANTED_AGAIN,
        /** Another owner holds or held it. */
        OTHER_OWNER,
        /** The caller is the owner, but of no grant with the given token. */
        NO_SUCH_GRANT
    }

    private final transient @Nullable Lease current;
    /** Why the caller does not hold the lease. */
    private final Reason reason;
    /** Who force-released the lease ({@link Reason#BROKEN}), or null if not named. */
    private final @Nullable String brokenBy;
    /** When the lease was force-released ({@link Reason#BROKEN}, database time), else null. */
    private final @Nullable Instant brokenAt;

    /**
     * For implementations of {@link Leases}: a release or renewal that matched no grant of the caller.
     *
     * @param name     the lease name
     * @param message  the detail message
     * @param current  the lease's row as it is now, or null if there is none
     * @param reason   why the caller does not hold the lease
     * @param brokenBy who force-released it ({@link Reason#BROKEN}), or null if not named
     * @param brokenAt when it was force-released ({@link Reason#BROKEN}), else null
     */
    public LeaseNotHeldException(
            String name,
            String message,
            @Nullable Lease current,
            Reason reason,
            @Nullable String brokenBy,
            @Nullable Instant brokenAt) {
        super(name, message, null);
        this.current = current;
        this.reason = reason;
        this.brokenBy = brokenBy;
        this.brokenAt = brokenAt;
    }

    /**
     * {@return the lease row as it was when the failure was diagnosed; empty if there is no row, or
     * after the exception was serialized (the row is not serialized)}
     */
    public Optional<Lease> current() {
        return Optional.ofNullable(current);
    }

    /** {@return why the caller does not hold the lease} */
    public Reason reason() {
        return reason;
    }

    /**
     * {@return for {@link Reason#BROKEN}, the operator who broke the lease; empty if they were not
     * named, or for another reason}
     */
    public Optional<String> brokenBy() {
        return Optional.ofNullable(brokenBy);
    }

    /** {@return for {@link Reason#BROKEN}, when the lease was broken (database time); empty for another reason} */
    public Optional<Instant> brokenAt() {
        return Optional.ofNullable(brokenAt);
    }
}
