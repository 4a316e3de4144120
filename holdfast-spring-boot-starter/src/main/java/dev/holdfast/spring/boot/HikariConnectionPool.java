package dev.holdfast.spring.boot;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.ProxyConnection;
import dev.holdfast.jdbc.ConnectionPool;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * The {@link ConnectionPool} of a HikariCP data source: a MariaDB lease service's wake-up connections are evicted
 * ({@link HikariDataSource#evictConnection}: the pool closes them, which ends their sessions, and never lends them
 * again), so that closing them logs nothing, where an aborted connection is logged as broken with a stack trace; the
 * pool's {@code maximumPoolSize} is named in the warning when the pool is too small for them.
 */
final class HikariConnectionPool implements ConnectionPool {

    private final HikariDataSource hikari;

    private HikariConnectionPool(HikariDataSource hikari) {
        this.hikari = hikari;
    }

    /** The pool of {@code dataSource} if it is (or wraps) a {@link HikariDataSource}, else {@link ConnectionPool#ABORTING}. */
    static ConnectionPool of(DataSource dataSource) {
        try {
            return dataSource.isWrapperFor(HikariDataSource.class)
                    ? new HikariConnectionPool(dataSource.unwrap(HikariDataSource.class))
                    : ABORTING;
        } catch (SQLException e) {
            return ABORTING;
        }
    }

    @Override
    public void retire(Connection connection) throws SQLException {
        // A connection wrapped on its way out of the pool is none HikariCP can evict: it is aborted instead.
        if (!(connection instanceof ProxyConnection)) {
            ABORTING.retire(connection);
            return;
        }
        hikari.evictConnection(connection);
        connection.close(); // the handle; quiet, as the connection is evicted
    }

    @Override
    public int maximumSize() {
        return hikari.getMaximumPoolSize();
    }
}
