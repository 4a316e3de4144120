package dev.holdfast.pessimistic.offline;

import java.time.Instant;
import java.util.Optional;

/**
 * {@link LockManager#tryLock} found a live lock on the resource. Carries who holds it and until
 * when (database time), so a page can say "being edited by alice until 14:05".
 */
public class AlreadyLockedException extends LockException {

    private final String type;
    private final String id;
    private final String owner;
    private final Instant acquiredAt;
    private final Instant expiresAt;

    public AlreadyLockedException(String type, String id, String owner, Instant acquiredAt, Instant expiresAt) {
        super(type + " " + id + " is locked" + (owner == null ? "" : " by " + owner) + " until " + expiresAt);
        this.type = type;
        this.id = id;
        this.owner = owner;
        this.acquiredAt = acquiredAt;
        this.expiresAt = expiresAt;
    }

    public String type() {
        return type;
    }

    public String id() {
        return id;
    }

    /** Who holds the lock; empty if it was taken without an owner. */
    public Optional<String> owner() {
        return Optional.ofNullable(owner);
    }

    /** When the holder took the lock (database time). */
    public Instant acquiredAt() {
        return acquiredAt;
    }

    /** When the lock expires unless extended (database time). */
    public Instant expiresAt() {
        return expiresAt;
    }
}
