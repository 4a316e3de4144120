package dev.holdfast.pessimistic.offline;

/**
 * The presented lock id authorizes nothing: it was released, force-released, purged, taken over
 * after it expired, or never issued. The subtypes refine the reason when it is known
 * ({@link LockExpiredException}, {@link ForeignLockException}); code written against the seed
 * that catches this class refuses all of them alike.
 */
public class LockNotHeldException extends LockException {

    public LockNotHeldException() {
        this("No lock for this lock id: it was released, taken over after expiry, purged, or never issued");
    }

    protected LockNotHeldException(String message) {
        super(message);
    }
}
