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

    /** What did not match. */
    private final Reason reason;

    /**
     * An exception for a live lock id presented for another resource or by another owner.
     *
     * @param reason  what did not match
     * @param message what was expected (the resource or the owner), for logs; never a lock id
     */
    public ForeignLockException(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    /** {@return what did not match: the resource or the owner} */
    public Reason reason() {
        return reason;
    }
}
