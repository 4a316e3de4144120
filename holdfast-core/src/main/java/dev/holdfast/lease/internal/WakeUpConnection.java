package dev.holdfast.lease.internal;

import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * A MariaDB service's wake-up connection ({@link MariaDbWakeUps}): borrowed when needed
 * ({@link SpareConnections}), marked alive while borrowed ({@link MariaDbHandOff#markAlive}), and given
 * back without any user-level lock, or aborted (its session ends, and its locks with it). Used under
 * its owner's wire lock; {@link #listener()} may be read by any thread.
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

    /** Runs a one-value statement with {@code bell}, then {@code more} bound; its value, 0 for null or no connection. */
    long run(String statement, String bell, Object... more) throws SQLException {
        Connection c = connection;
        if (c == null) {
            return 0;
        }
        try (PreparedStatement ps = c.prepareStatement(statement)) {
            ps.setString(1, bell);
            for (int i = 0; i < more.length; i++) {
                ps.setObject(i + 2, more[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long value = rs.getLong(1);
                answered();
                return value;
            }
        }
    }

    /** Sleeps on {@code bell}, then reads lease {@code name} ({@link MariaDbHandOff#sleep}); null without a connection. */
    MariaDbHandOff.@Nullable Woken sleep(MariaDbLeaseSql sql, String bell, double seconds, String name) throws SQLException {
        Connection c = connection;
        if (c == null) {
            return null;
        }
        MariaDbHandOff.Woken woken = MariaDbHandOff.sleep(c, sql, bell, seconds, name);
        answered();
        return woken;
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

    /** Gives every user-level lock back and the connection to the pool. */
    void giveBack() throws SQLException {
        Connection c = connection;
        if (c == null) {
            return;
        }
        try (PreparedStatement ps = c.prepareStatement(MariaDbLeaseSql.BELL_RELEASE_ALL)) {
            ps.executeQuery().close();
        }
        connection = null;
        listener = null;
        c.close();
    }

    /** After a failure: the session ends (and its locks with it), and the connection is closed. */
    void abort() {
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
