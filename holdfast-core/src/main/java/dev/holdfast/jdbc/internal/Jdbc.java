package dev.holdfast.jdbc.internal;

import dev.holdfast.DatabaseException;
import dev.holdfast.internal.Failures;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * How Holdfast runs SQL on a borrowed connection. Every method returns the connection to the pool
 * as it came (auto-commit mode and isolation unchanged) on every path, and turns an
 * {@link SQLException} into a {@link DatabaseException} that says what was being done.
 */
public final class Jdbc {

    private Jdbc() {}

    /** What runs on a connection. */
    @FunctionalInterface
    public interface Work<T> {
        T run(Connection connection) throws SQLException;
    }

    /**
     * Borrows a connection and runs {@code work} so that it commits on its own, independent of any
     * transaction of the caller: as the pool hands it out in auto-commit mode, or committed at once
     * (rolled back on failure) on a pool of manual-commit connections.
     *
     * @param what what is being done, for the {@link DatabaseException}
     */
    public static <T> T autocommit(DataSource dataSource, String what, Work<T> work) {
        return autocommit(dataSource, () -> what, work);
    }

    /**
     * {@link #autocommit(DataSource, String, Work)} with the description built only on failure (for
     * hot paths whose description concatenates).
     */
    public static <T> T autocommit(DataSource dataSource, Supplier<String> what, Work<T> work) {
        try (Connection c = dataSource.getConnection()) {
            return autocommit(c, work);
        } catch (SQLException e) {
            throw Failures.database(what.get(), e);
        }
    }

    /** {@link #autocommit(DataSource, String, Work)} on a connection the caller borrowed (and closes). */
    public static <T> T autocommit(Connection c, Work<T> work) throws SQLException {
        if (c.getAutoCommit()) {
            return work.run(c);
        }
        try {
            T result = work.run(c);
            c.commit();
            return result;
        } catch (SQLException e) {
            throw rolledBack(c, e);
        } catch (RuntimeException e) {
            throw rolledBack(c, e);
        }
    }

    /**
     * Borrows a connection and runs {@code work} in a transaction of its own at {@code isolation}.
     * {@code work} commits what it decides to keep; whatever it leaves open is rolled back. The
     * connection's auto-commit mode and isolation are restored before it goes back to the pool.
     *
     * @param isolation a {@link Connection} isolation level
     */
    public static <T> T transaction(DataSource dataSource, int isolation, String what, Work<T> work) {
        try (Connection c = dataSource.getConnection()) {
            boolean autoCommit = c.getAutoCommit();
            int savedIsolation = c.getTransactionIsolation();
            try {
                c.setAutoCommit(false);
                c.setTransactionIsolation(isolation);
                return work.run(c);
            } finally {
                try {
                    c.rollback(); // no-op after a commit; ends the transaction on any other path
                } finally {
                    c.setTransactionIsolation(savedIsolation);
                    c.setAutoCommit(autoCommit);
                }
            }
        } catch (SQLException e) {
            throw Failures.database(what, e);
        }
    }

    /**
     * Rolls {@code c} back after {@code failure}, which is returned to be thrown; a failing rollback
     * is attached to it as suppressed, never thrown in its place.
     */
    public static <E extends Exception> E rolledBack(Connection c, E failure) {
        try {
            c.rollback();
        } catch (SQLException rollback) {
            failure.addSuppressed(rollback);
        }
        return failure;
    }
}
