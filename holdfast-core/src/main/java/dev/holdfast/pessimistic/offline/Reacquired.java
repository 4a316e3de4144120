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

    /**
     * Checks that {@code lockId} is given.
     *
     * @param lockId   the only id that authorizes the lock now; not null
     * @param replaced true if the owner already held the lock and its earlier id was replaced
     * @throws IllegalArgumentException if {@code lockId} is null
     */
    public Reacquired {
        Arguments.notNull(lockId, "lockId");
    }
}
