package dev.holdfast.pessimistic.offline;

import dev.holdfast.Holder;

import java.time.Instant;

/**
 * A live lock as operators see it: which resource, who, since and until when (database time).
 * Deliberately without the lock id: an operator view must not hand out capabilities.
 *
 * @param type       the kind of resource locked, as given to {@link LockManager#tryLock}
 * @param id         the resource's id within its type
 * @param owner      who holds the lock; null if it was taken without an owner
 * @param acquiredAt when the lock was taken (kept by extensions)
 * @param expiresAt  when the lock expires unless it is extended
 */
public record HeldLock(String type, String id, String owner, Instant acquiredAt, Instant expiresAt) {

    /** {@return who holds it, since and until when, in the vocabulary shared with leases (no token)} */
    public Holder holder() {
        return new Holder(owner, acquiredAt, expiresAt, null);
    }
}
