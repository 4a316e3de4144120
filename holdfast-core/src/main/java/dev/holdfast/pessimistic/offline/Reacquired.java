package dev.holdfast.pessimistic.offline;

import dev.holdfast.internal.Arguments;

/**
 * The result of {@link LockManager#reacquire}: the owner's lock with a fresh id.
 *
 * @param lockId   the only id that authorizes the lock now
 * @param replaced true if the owner already held the lock (another tab, a reloaded page): its
 *                 earlier id authorizes nothing any more, so a save from there is refused
 */
public record Reacquired(LockId lockId, boolean replaced) {

    public Reacquired {
        Arguments.notNull(lockId, "lockId");
    }
}
