package dev.holdfast.pessimistic.offline;

import dev.holdfast.Holder;
import org.jspecify.annotations.Nullable;

import java.time.Instant;
import java.util.Optional;

/**
 * {@link LockManager#tryLock} found a live lock on the resource. Carries who holds it and until
 * when (database time), so a page can say "being edited by alice until 14:05".
 */
public class AlreadyLockedException extends LockException {

    private final String type;
    private final String id;
    private final @Nullable String owner;
    private final Instant acquiredAt;
    private final Instant expiresAt;

    /** @param owner who holds the lock; null if it was taken without an owner */
    public AlreadyLockedException(String type, String id, @Nullable String owner, Instant acquiredAt, Instant expiresAt) {
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

    /** Who holds the lock, since and until when, in the vocabulary shared with leases (no token). */
    public Holder holder() {
        return new Holder(owner, acquiredAt, expiresAt, null);
    }
}
