package dev.holdfast.pessimistic.offline;

/**
 * The lock id is live but belongs to something else: a lock for another resource (an id for order
 * A presented to edit order B), or a lock held by another owner (user U2 presenting U1's id). The
 * message names the expected resource or owner, never the token.
 */
public class ForeignLockException extends LockNotHeldException {

    /** What did not match. */
    public enum Reason {
        /** The lock is for another type or id. */
        OTHER_RESOURCE,
        /** The lock is held by another owner (or by none, when an owner was presented). */
        OTHER_OWNER
    }

    private final Reason reason;

    public ForeignLockException(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
