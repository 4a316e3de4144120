package dev.holdfast.pessimistic;

import dev.holdfast.jdbc.dialect.Dialect;
import org.jspecify.annotations.Nullable;

import java.lang.reflect.InvocationTargetException;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * The database's id of a connection's session, read from the JDBC driver without a statement, so
 * that it can be read on another thread while the connection waits for a lock: pgjdbc's
 * {@code PGConnection.getBackendPID()}, MariaDB Connector/J's {@code Connection.getThreadId()},
 * embedded H2's session id. Each is a field the driver read at connect time; none takes a lock.
 * Through a pool's proxy by {@link Connection#unwrap}. Holdfast depends on no driver: the classes
 * are found by name, and any other driver (or H2 over TCP) has no id here.
 */
final class SessionIds {

    private SessionIds() {}

    /** The session id, or null if this driver does not tell it. */
    static @Nullable String of(Dialect dialect, Connection connection) {
        try {
            Object id = switch (dialect) {
                case POSTGRESQL -> call(unwrap(connection, "org.postgresql.PGConnection"), "getBackendPID");
                case MARIADB -> call(unwrap(connection, "org.mariadb.jdbc.Connection"), "getThreadId");
                case H2 -> call(call(unwrap(connection, "org.h2.jdbc.JdbcConnection"), "getSession"), "getId");
            };
            return id == null ? null : id.toString();
        } catch (ReflectiveOperationException | SQLException | RuntimeException e) {
            return null;
        }
    }

    private static @Nullable Object unwrap(Connection connection, String driverType) throws SQLException {
        for (ClassLoader loader : new ClassLoader[] {
            connection.getClass().getClassLoader(),
            Thread.currentThread().getContextClassLoader(),
            SessionIds.class.getClassLoader()
        }) {
            Class<?> type;
            try {
                type = Class.forName(driverType, false, loader);
            } catch (ClassNotFoundException e) {
                continue;
            }
            if (type.isInstance(connection)) {
                return connection;
            }
            if (connection.isWrapperFor(type)) {
                return connection.unwrap(type);
            }
        }
        return null;
    }

    private static @Nullable Object call(@Nullable Object target, String method)
            throws NoSuchMethodException, IllegalAccessException, InvocationTargetException {
        return target == null ? null : target.getClass().getMethod(method).invoke(target);
    }
}
