package dev.holdfast.optimistic.offline;

import dev.holdfast.HoldfastException;

/**
 * A sealed business-transaction state did not verify: it was altered, forged, truncated, sealed
 * with another key or for another binding (e.g. another user's session). Nothing was read from it
 * and nothing was written. Treat it like a failed signature: do not retry with the same input.
 */
public class TamperedStateException extends HoldfastException {

    TamperedStateException(String message) {
        super(message);
    }

    TamperedStateException(String message, Throwable cause) {
        super(message, cause);
    }
}
