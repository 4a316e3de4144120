package dev.holdfast.lease.internal;

import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * A MariaDB service's wake-up connection ({@link MariaDbWakeUps}): borrowed when needed
 * ({@link SpareConnections}), marked alive while borrowed ({@link MariaDbHandOff#markAlive}), and
 * aborted at the end (its session ends, and its lock with it). Used by its owner's thread only;
 * {@link #listener()} may be read by any thread.
 */
final class WakeUpConnection {

    /** The wake-ups' own logger: an outage and its end are theirs. */
    private final System.Logger log;
    private final SpareConnections spares;
    private final String table;
    /** Run when a borrowed connection is marked alive: waiters may publish it from now on. */
    private final Runnable alive;
    private @Nullable Connection connection;
    /** The connection's id while it holds its live lock, else null. */
    private volatile @Nullable Integer listener;
    private long idleSince;
    private boolean outageReported;

    WakeUpConnection(SpareConnections spares, String table, Runnable alive, System.Logger log) {
        this.log = log;
        this.spares = spares;
        this.table = table;
        this.alive = alive;
    }

    /** The connection, borrowed if need be, or null while the pool has none to spare. */
    @Nullable Connection get() throws SQLException {
        if (connection == null) {
            Connection c = spares.borrow();
            connection = c;
            idleSince = System.nanoTime();
            listener = c == null ? null : MariaDbHandOff.markAlive(c);
            if (listener != null) {
                answered();
                alive.run();
            }
        }
        return connection;
    }

    /** Whether a connection is borrowed now (without borrowing one). */
    boolean isOpen() {
        return connection != null;
    }

    /** The id waiters publish so that a release may hand them the lease, or null without a live connection. */
    @Nullable Integer listener() {
        return listener;
    }

    /** When the connection last answered (or was borrowed). */
    long idleSince() {
        return idleSince;
    }

    /**
     * Sleeps until a release hands a lease to one of this service's waiters, past the grants in {@code seen}
     * ({@link MariaDbHandOff#watch}); false without a connection.
     */
    boolean watch(MariaDbLeaseSql sql, java.util.List<MariaDbHandOff.HandedHere> seen, double seconds) throws SQLException {
        Connection c = connection;
        if (c == null) {
            return false;
        }
        boolean handed = MariaDbHandOff.watch(c, sql, seen, seconds);
        answered();
        return handed;
    }

    /** The live grants handed to this service's waiters ({@link MariaDbHandOff#handedHere}); none without a connection. */
    java.util.List<MariaDbHandOff.HandedHere> handedHere(MariaDbLeaseSql sql) throws SQLException {
        Connection c = connection;
        if (c == null) {
            return java.util.List.of();
        }
        java.util.List<MariaDbHandOff.HandedHere> handed = MariaDbHandOff.handedHere(c, sql);
        answered();
        return handed;
    }

    /** The connection answered a statement: an outage said before is over. */
    void answered() {
        idleSince = System.nanoTime();
        if (outageReported) {
            outageReported = false;
            log.log(System.Logger.Level.INFO, "Lease wake-ups (table " + table + ") resumed");
        }
    }

    /** Says once per outage that waiters poll until the connection is back. */
    void reportOutage(Exception e) {
        if (!outageReported) {
            log.log(System.Logger.Level.WARNING, "Lease wake-ups (table " + table + ") stopped: blocking"
                    + " lease waiters poll until the wake-up connection is back", e);
            outageReported = true;
        }
    }

    /**
     * Closes the connection for good (its session ends, and its live lock with it), never back to the pool:
     * a release's kill that comes late then finds no session of that id, where a pooled one would run
     * somebody else's statement.
     */
    void close() {
        Connection c = connection;
        connection = null;
        listener = null;
        if (c != null) {
            try {
                c.abort(Runnable::run);
            } catch (SQLException | RuntimeException ignored) {
                // closed anyway below
            }
            BoundedBorrow.closeQuietly(c);
        }
    }
}
