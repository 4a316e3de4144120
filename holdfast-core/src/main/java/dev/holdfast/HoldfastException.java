package dev.holdfast;

import org.jspecify.annotations.Nullable;

/**
 * Root of every exception Holdfast throws for a concurrency outcome or a database failure.
 *
 * <p>The tree is small on purpose, in the spirit of Spring's {@code DataAccessException}: a
 * caller catches what happened (a lock wait ran out, a version was stale, a lease was lost), not
 * which vendor code said so. Bad arguments are not in this tree: they raise
 * {@link IllegalArgumentException} before any SQL runs.
 */
public abstract class HoldfastException extends RuntimeException {

    /**
     * Creates an exception without a cause.
     *
     * @param message the detail message
     */
    protected HoldfastException(String message) {
        super(message);
    }

    /**
     * Creates an exception with a cause.
     *
     * @param message the detail message
     * @param cause   the exception that led to this one; null if none
     */
    protected HoldfastException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
