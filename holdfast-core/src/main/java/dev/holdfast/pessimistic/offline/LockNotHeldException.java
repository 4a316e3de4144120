package dev.holdfast.pessimistic.offline;

/**
 * The presented lock id authorizes nothing: it was released, force-released, purged, taken over
 * after it expired, or never issued. The subtypes refine the reason when it is known
 * ({@link LockEndedException}: how, by whom and when it ended and who holds the resource now;
 * {@link LockExpiredException}; {@link ForeignLockException}); this class itself means an id that
 * was never issued or whose end is no longer remembered. Code that catches this class refuses all of
 * them alike.
 */
public class LockNotHeldException extends LockException {

    /** An exception for a lock id that authorizes nothing, for a reason that is not known. */
    public LockNotHeldException() {
        this("No lock for this lock id: it was released, taken over after expiry, purged, or never issued");
    }

    /**
     * An exception with the given message, for a subtype that knows the reason.
     *
     * @param message why the lock id authorizes nothing, for logs; never a lock id
     */
    protected LockNotHeldException(String message) {
        super(message);
    }
}
