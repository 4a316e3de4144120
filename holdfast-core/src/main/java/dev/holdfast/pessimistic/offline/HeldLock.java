package dev.holdfast.pessimistic.offline;

import java.time.Instant;

/**
 * A live lock as operators see it: which resource, who, since and until when (database time).
 * Deliberately without the lock id: an operator view must not hand out capabilities.
 *
 * @param owner null if the lock was taken without an owner
 */
public record HeldLock(String type, String id, String owner, Instant acquiredAt, Instant expiresAt) {
}
