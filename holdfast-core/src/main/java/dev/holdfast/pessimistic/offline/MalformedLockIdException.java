package dev.holdfast.pessimistic.offline;

/**
 * A string that is not a lock id at all (wrong length or characters): bad input from a form,
 * rejected before any SQL runs. A well-formed id that authorizes nothing raises
 * {@link LockNotHeldException} instead.
 */
public class MalformedLockIdException extends IllegalArgumentException {

    /**
     * An exception whose message is {@code "Malformed lock id: "} followed by {@code message}.
     *
     * @param message what is wrong with the value (its length or characters); never the value itself
     */
    public MalformedLockIdException(String message) {
        super("Malformed lock id: " + message);
    }
}
