package dev.holdfast;

import java.sql.SQLException;

/**
 * A database failure that Holdfast does not translate into a more specific outcome: a lost
 * connection, a missing table, a constraint it did not expect. The cause is the driver's
 * {@link SQLException}; its SQLState and vendor code are repeated in the message.
 */
public class DatabaseException extends HoldfastException {

    public DatabaseException(String what, SQLException cause) {
        super(what + ": " + cause.getMessage()
                + " [SQLState " + cause.getSQLState() + ", code " + cause.getErrorCode() + "]", cause);
    }

    /** The driver's exception. */
    public SQLException sqlException() {
        // Never null: the constructor takes the cause (and dev.holdfast depends on no package of its own).
        return (SQLException) java.util.Objects.requireNonNull(getCause(), "built with its SQLException");
    }
}
