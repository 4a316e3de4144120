package dev.holdfast.pessimistic.offline;

/**
 * A string that is not a lock id at all (wrong length or characters): bad input from a form,
 * rejected before any SQL runs. A well-formed id that authorizes nothing raises
 * {@link LockNotHeldException} instead.
 */
public class MalformedLockIdException extends IllegalArgumentException {

    public MalformedLockIdException(String message) {
        super("Malformed lock id: " + message);
    }
}
