package dev.holdfast;

import java.sql.SQLException;

/**
 * A database failure that Holdfast does not translate into a more specific outcome: a lost
 * connection, a missing table, a constraint it did not expect. The cause is the driver's
 * {@link SQLException}; its SQLState and vendor code are repeated in the message.
 */
public class DatabaseException extends HoldfastException {

    /**
     * Creates the exception for a failure of {@code cause} while Holdfast was doing {@code what}.
     *
     * @param what  what Holdfast was doing, as in {@code "acquiring lease 'report'"}; the message begins with it
     * @param cause the driver's exception; not null
     */
    public DatabaseException(String what, SQLException cause) {
        super(
                what + ": " + cause.getMessage() + " [SQLState " + cause.getSQLState() + ", code "
                        + cause.getErrorCode() + "]",
                cause);
    }

    /** {@return the driver's exception, the cause this exception was created with} */
    public SQLException sqlException() {
        // The constructor takes the cause, and initCause cannot replace it: this never throws.
        if (getCause() instanceof SQLException cause) {
            return cause;
        }
        throw new IllegalStateException("A DatabaseException without its SQLException");
    }
}
