package dev.holdfast.internal;

import dev.holdfast.DatabaseException;
import dev.holdfast.PoolingModeException;

import java.sql.SQLException;

/** The exception for a database failure Holdfast does not translate into a more specific outcome. */
public final class Failures {

    private Failures() {}

    /**
     * A {@link DatabaseException} for {@code cause}, or the more specific {@link PoolingModeException}
     * when a pooler lost a prepared statement.
     *
     * @param what what Holdfast was doing, as in "acquiring lease 'report'"
     */
    public static DatabaseException database(String what, SQLException cause) {
        return isLostPreparedStatement(cause)
                ? new PoolingModeException(what, cause)
                : new DatabaseException(what, cause);
    }

    /**
     * Whether {@code e}, an exception it chains or one it is caused by says that a server-side prepared
     * statement does not exist (26000) or already exists (42P05): Holdfast runs no {@code PREPARE} of its
     * own, so it is pgjdbc's statement on a server connection a pooler switched.
     */
    static boolean isLostPreparedStatement(SQLException e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException s) {
                for (SQLException n = s; n != null; n = n.getNextException()) {
                    String state = n.getSQLState();
                    String message = n.getMessage();
                    if (("26000".equals(state) || "42P05".equals(state))
                            && message != null
                            && message.contains("prepared statement")) {
                        return true;
                    }
                }
            }
        }
        return false;
    }
}
