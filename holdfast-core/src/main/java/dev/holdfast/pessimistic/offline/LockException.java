package dev.holdfast.pessimistic.offline;

import dev.holdfast.HoldfastException;

/**
 * An offline lock was not granted or does not authorize what was asked. Subtypes say why:
 * {@link AlreadyLockedException} (someone else holds it) or {@link LockNotHeldException} and its
 * refinements {@link LockExpiredException} and {@link ForeignLockException} (this lock id does not
 * authorize the call).
 */
public abstract class LockException extends HoldfastException {

    /**
     * An exception with the given message.
     *
     * @param message what was refused and why, for logs; never a lock id
     */
    protected LockException(String message) {
        super(message);
    }
}
