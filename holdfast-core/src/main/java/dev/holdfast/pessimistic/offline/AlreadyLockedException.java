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

    /** The type of the locked resource. */
    private final String type;
    /** The id of the locked resource. */
    private final String id;
    /** Who holds the lock; null if it was taken without an owner. */
    private final @Nullable String owner;
    /** When the holder took the lock (database time). */
    private final Instant acquiredAt;
    /** When the lock expires unless extended (database time). */
    private final Instant expiresAt;

    /**
     * An exception for the live lock on {@code type}/{@code id}; the message names the owner and the
     * expiry, never the lock id.
     *
     * @param type       the type of the locked resource
     * @param id         the id of the locked resource
     * @param owner      who holds the lock; null if it was taken without an owner
     * @param acquiredAt when the holder took the lock (database time)
     * @param expiresAt  when the lock expires unless extended (database time)
     */
    public AlreadyLockedException(
            String type, String id, @Nullable String owner, Instant acquiredAt, Instant expiresAt) {
        super(type + " " + id + " is locked" + (owner == null ? "" : " by " + owner) + " until " + expiresAt);
        this.type = type;
        this.id = id;
        this.owner = owner;
        this.acquiredAt = acquiredAt;
        this.expiresAt = expiresAt;
    }

    /** {@return the type of the locked resource} */
    public String type() {
        return type;
    }

    /** {@return the id of the locked resource} */
    public String id() {
        return id;
    }

    /** {@return who holds the lock; empty if it was taken without an owner} */
    public Optional<String> owner() {
        return Optional.ofNullable(owner);
    }

    /** {@return when the holder took the lock (database time)} */
    public Instant acquiredAt() {
        return acquiredAt;
    }

    /** {@return when the lock expires unless extended (database time)} */
    public Instant expiresAt() {
        return expiresAt;
    }

    /** {@return who holds the lock, since and until when, in the vocabulary shared with leases (no token)} */
    public Holder holder() {
        return new Holder(owner, acquiredAt, expiresAt, null);
    }
}
