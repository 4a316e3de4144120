package dev.holdfast.lease;

import java.util.Optional;

/**
 * A release or renewal by a caller that does not hold the lease: another owner holds it, it was
 * already released (or force-released by an operator), or it never existed. Nothing was changed.
 * The subclass {@link LeaseExpiredException} says the caller <em>did</em> hold it but the grant ran
 * out first: its critical section may have overlapped another holder's.
 */
public class LeaseNotHeldException extends LeaseException {

    private final transient Lease current;

    LeaseNotHeldException(String name, String message, Lease current) {
        super(name, message, null);
        this.current = current;
    }

    /** The lease row as it was when the failure was diagnosed; empty if there is no row. */
    public Optional<Lease> current() {
        return Optional.ofNullable(current);
    }
}
