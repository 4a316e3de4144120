package dev.holdfast;

import java.sql.SQLException;

/**
 * A pooler between Holdfast and PostgreSQL lost track of a server-side prepared statement: pgjdbc
 * prepared it on one server connection and the pooler ran the next execution on another, where it
 * does not exist (SQLState 26000) or where another client's statement of the same name does
 * (42P05). PgBouncer in transaction pooling mode before 1.21 does this once a statement has run
 * {@code prepareThreshold} times (pgjdbc's default 5). Add {@code prepareThreshold=0} to the JDBC
 * URL (pgjdbc then never names a statement on the server), or use session pooling; the call that
 * failed changed nothing (its transaction is rolled back).
 */
public class PoolingModeException extends DatabaseException {

    /** What the message says to change. */
    private static final String ADVICE =
            "a connection pooler in transaction mode (PgBouncer before 1.21) ran a server-side"
                    + " prepared statement of pgjdbc on another server connection: add prepareThreshold=0 to the JDBC URL"
                    + " (e.g. jdbc:postgresql://host:6432/db?prepareThreshold=0), or use session pooling";

    /**
     * Creates the exception for a lost prepared statement; its message follows {@code what} with the fix
     * ({@code prepareThreshold=0} or session pooling).
     *
     * @param what  what Holdfast was doing, as in {@code "acquiring lease 'report'"}
     * @param cause the driver's exception (SQLState 26000 or 42P05); not null
     */
    public PoolingModeException(String what, SQLException cause) {
        super(what + " (" + ADVICE + ")", cause);
    }
}
