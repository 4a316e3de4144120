package dev.holdfast.pessimistic.offline;

import dev.holdfast.Holder;

import java.time.Instant;

/**
 * A live lock as operators see it: which resource, who, since and until when (database time).
 * Deliberately without the lock id: an operator view must not hand out capabilities.
 *
 * @param owner null if the lock was taken without an owner
 */
public record HeldLock(String type, String id, String owner, Instant acquiredAt, Instant expiresAt) {

    /** Who holds it, since and until when, in the vocabulary shared with leases (no token). */
    public Holder holder() {
        return new Holder(owner, acquiredAt, expiresAt, null);
    }
}
