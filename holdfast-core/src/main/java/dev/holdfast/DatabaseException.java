package dev.holdfast;

import dev.holdfast.internal.Invariants;
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

    /**
     * A {@code DatabaseException} for {@code cause}, or the more specific {@link PoolingModeException}
     * when a pooler lost a prepared statement.
     *
     * @param what what Holdfast was doing, as in "acquiring lease 'report'"
     */
    public static DatabaseException of(String what, SQLException cause) {
        return PoolingModeException.isLostPreparedStatement(cause) ? new PoolingModeException(what, cause)
                : new DatabaseException(what, cause);
    }

    /** The driver's exception. */
    public SQLException sqlException() {
        // Never null: the constructor takes the cause.
        return (SQLException) Invariants.nonNull(getCause(), "built with its SQLException");
    }
}
