package dev.holdfast.pessimistic.offline;

import java.time.Instant;

/**
 * The lock id was valid but its lock has expired (by database time) and nobody has taken the
 * resource over yet. An expired lock authorizes nothing: it cannot be checked, extended or
 * released. Take a new lock with {@link LockManager#tryLock}.
 */
public class LockExpiredException extends LockNotHeldException {

    /** The type of the locked resource. */
    private final String type;
    /** The id of the locked resource. */
    private final String id;
    /** When the lock expired (database time). */
    private final Instant expiredAt;

    /**
     * An exception for an expired lock on {@code type}/{@code id}.
     *
     * @param type      the type of the locked resource
     * @param id        the id of the locked resource
     * @param expiredAt when the lock expired (database time)
     */
    public LockExpiredException(String type, String id, Instant expiredAt) {
        super("The lock on " + type + " " + id + " expired at " + expiredAt);
        this.type = type;
        this.id = id;
        this.expiredAt = expiredAt;
    }

    /** {@return the type of the locked resource} */
    public String type() {
        return type;
    }

    /** {@return the id of the locked resource} */
    public String id() {
        return id;
    }

    /** {@return when the lock expired (database time)} */
    public Instant expiredAt() {
        return expiredAt;
    }
}
