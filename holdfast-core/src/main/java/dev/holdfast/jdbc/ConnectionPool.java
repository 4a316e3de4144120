package dev.holdfast.jdbc;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * What a MariaDB {@code LeaseService} needs to know of the pool behind its data source
 * ({@code LeaseService.Builder#connectionPool}): how to let go of the connections its wake-ups borrowed, and the
 * pool's maximum size, for the warning when the pool is too small for them. Elsewhere it is not used.
 *
 * <p>While a service has waiting {@code acquire} calls, it keeps two pooled connections: its wake-up connection, and
 * one holding that connection's doorbell lock. A release that hands a lease to one of its waiters ends the wake-up
 * connection's statement with {@code KILL QUERY <connection id>}, from another process maybe; a kill that arrives
 * late must find no session of that id, since a pooled session would be running somebody else's statement. So these
 * connections never go back to the pool: once the service needs them no more (a second without waiting calls, a
 * failure, {@code close()}), it gives their user-level locks back and hands each to {@link #retire}, once. It takes
 * them only if the pool can lend a third at the same moment (once, given back at once), so that its own statements
 * never wait for the two: a pool needs three connections, and two more than the application's own concurrent calls.
 *
 * <p>{@link #ABORTING}, the default, works with any pool, but HikariCP logs a warning with a stack trace for every
 * aborted connection ("marked as broken"). With HikariCP, evict the connection instead (the Spring Boot starter does
 * this for a HikariCP data source):
 *
 * <pre>{@code
 * final class HikariConnections implements ConnectionPool {
 *     private final HikariDataSource hikari;
 *     HikariConnections(HikariDataSource hikari) { this.hikari = hikari; }
 *     public void retire(Connection c) throws SQLException {
 *         hikari.evictConnection(c); // closed by the pool: its session ends, and it is never lent again
 *         c.close();                 // the pool's handle; quiet, as the connection is evicted
 *     }
 *     public int maximumSize() { return hikari.getMaximumPoolSize(); }
 * }
 * LeaseService leases = LeaseService.builder(hikari).connectionPool(new HikariConnections(hikari)).build();
 * }</pre>
 */
@FunctionalInterface
public interface ConnectionPool {

    /** Aborts the connection ({@link Connection#abort}: its session ends, and any pool discards it), then closes it. */
    ConnectionPool ABORTING = connection -> {
        try {
            connection.abort(Runnable::run);
        } finally {
            connection.close();
        }
    };

    /**
     * Ends the session of {@code connection}, borrowed from the service's data source, for good: the pool must never
     * lend it again. Called once per connection, on a thread of the service, which uses the connection no more; what
     * it throws is ignored.
     *
     * @param connection a connection the service borrowed from its data source; not null
     * @throws SQLException if ending the session or closing the connection fails; the service logs it and goes on
     */
    void retire(Connection connection) throws SQLException;

    /**
     * {@return the pool's maximum number of connections now, or 0 if unknown (the default)} The service names it in
     * the warning that the pool is too small for the wake-ups, with the size to set.
     */
    default int maximumSize() {
        return 0;
    }
}
