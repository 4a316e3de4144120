package dev.holdfast.lease;

/**
 * A lease kept alive by a {@link LeaseGuard} is no longer held: a renewal found it expired or
 * taken over, or renewals kept failing until the last confirmed grant ran out. Work done under it
 * from now on is not protected; fenced writes with its token are refused once a newer grant writes.
 */
public class LeaseLostException extends LeaseException {

    private final long token;

    LeaseLostException(String name, long token, String message, Throwable cause) {
        super(name, message, cause);
        this.token = token;
    }

    /** The fencing token of the lost grant. */
    public long token() {
        return token;
    }
}
