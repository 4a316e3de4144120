package dev.holdfast.pessimistic.offline;

import java.time.Instant;

/**
 * The lock id was valid but its lock has expired (by database time) and nobody has taken the
 * resource over yet. An expired lock authorizes nothing: it cannot be checked, extended or
 * released. Take a new lock with {@link LockManager#tryLock}.
 */
public class LockExpiredException extends LockNotHeldException {

    private final String type;
    private final String id;
    private final Instant expiredAt;

    public LockExpiredException(String type, String id, Instant expiredAt) {
        super("The lock on " + type + " " + id + " expired at " + expiredAt);
        this.type = type;
        this.id = id;
        this.expiredAt = expiredAt;
    }

    public String type() {
        return type;
    }

    public String id() {
        return id;
    }

    /** When the lock expired (database time). */
    public Instant expiredAt() {
        return expiredAt;
    }
}
