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
    private final Reason reason;
    private final @Nullable String brokenBy;
    private final @Nullable Instant brokenAt;

    /**
     * For implementations of {@link Leases}: a release or renewal that matched no grant of the caller.
     *
     * @param current  the lease's row as it is now, or null if there is none
     * @param brokenBy who force-released it ({@link Reason#BROKEN}), or null if not named
     * @param brokenAt when it was force-released ({@link Reason#BROKEN}), else null
     */
    public LeaseNotHeldException(String name, String message, @Nullable Lease current, Reason reason,
                                 @Nullable String brokenBy, @Nullable Instant brokenAt) {
        super(name, message, null);
        this.current = current;
        this.reason = reason;
        this.brokenBy = brokenBy;
        this.brokenAt = brokenAt;
    }

    /** The lease row as it was when the failure was diagnosed; empty if there is no row. */
    public Optional<Lease> current() {
        return Optional.ofNullable(current);
    }

    /** Why the caller does not hold the lease. */
    public Reason reason() {
        return reason;
    }

    /** For {@link Reason#BROKEN}: the operator who broke it, if they were named. */
    public Optional<String> brokenBy() {
        return Optional.ofNullable(brokenBy);
    }

    /** For {@link Reason#BROKEN}: when it was broken (database time). */
    public Optional<Instant> brokenAt() {
        return Optional.ofNullable(brokenAt);
    }
}
