package dev.holdfast.lease.internal;

import dev.holdfast.jdbc.ConnectionPool;
import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A MariaDB service's wake-up connection ({@link MariaDbWakeUps}) and the connection that holds its
 * doorbell: borrowed together when needed ({@link SpareConnections}), the first marked alive while
 * borrowed ({@link MariaDbHandOff#markAlive}), the second holding the user-level lock the first waits
 * for ({@link MariaDbHandOff#holdBell}), which a release's kill ends; both retired at the end
 * ({@link ConnectionPool#retire}: their sessions end, and their locks with them). Used by one thread at a time, whoever has its owner's turn;
 * {@link #listener()} may be read by any thread.
 */
final class WakeUpConnection {

    /** How long the doorbell's holder stays silent at most: well below any {@code wait_timeout} a server is given. */
    static final long BELL_PING_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
    /** The wake-ups' own logger: an outage and its end are theirs. */
    private final System.Logger log;

    private final SpareConnections spares;
    private final ConnectionPool pool;
    /** How many connections were handed to the pool to retire. */
    private final AtomicLong retired = new AtomicLong();

    private final String table;
    /** Run when a borrowed connection is marked alive: waiters may publish it from now on. */
    private final Runnable alive;

    private @Nullable Connection connection;
    /** Holds the doorbell {@link #connection} waits for; idle otherwise, but for {@link #keepBell()}. */
    private @Nullable Connection bell;

    private long bellAnsweredAt;
    /** The connection's id while it holds its live lock, else null. */
    private volatile @Nullable Integer listener;

    private long idleSince;
    private boolean outageReported;

    WakeUpConnection(SpareConnections spares, ConnectionPool pool, String table, Runnable alive, System.Logger log) {
        this.log = log;
        this.spares = spares;
        this.pool = pool;
        this.table = table;
        this.alive = alive;
    }

    /** The connection, borrowed if need be, or null while the pool has none to spare. */
    @Nullable
    Connection get() throws SQLException {
        if (connection == null) {
            java.util.List<Connection> borrowed = spares.borrow(2);
            if (borrowed == null) {
                return null;
            }
            Connection c = borrowed.get(0);
            connection = c;
            bell = borrowed.get(1);
            idleSince = System.nanoTime();
            bellAnsweredAt = idleSince;
            Integer id = MariaDbHandOff.markAlive(c);
            // The doorbell is held before the id is published: no waiter's entry names a connection without one.
            listener = id != null && MariaDbHandOff.holdBell(borrowed.get(1), id) ? id : null;
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
    @Nullable
    Integer listener() {
        return listener;
    }

    /** When the connection last answered (or was borrowed). */
    long idleSince() {
        return idleSince;
    }

    /**
     * Waits until a release hands a lease to one of this service's waiters, past the grants in {@code seen}
     * ({@link MariaDbHandOff#watch}); {@link MariaDbHandOff.Watched#QUIET} without a connection.
     */
    MariaDbHandOff.Watched watch(MariaDbLeaseSql sql, java.util.List<MariaDbHandOff.HandedHere> seen, double seconds)
            throws SQLException {
        Connection c = connection;
        if (c == null) {
            return MariaDbHandOff.Watched.QUIET;
        }
        MariaDbHandOff.Watched watched = MariaDbHandOff.watch(c, sql, seen, seconds);
        answered();
        return watched;
    }

    /**
     * Sends the doorbell's holder a statement if it was silent for {@link #BELL_PING_NANOS}: a server closes a session
     * idle for {@code wait_timeout}, and the doorbell with it (then both connections are replaced, an outage).
     */
    void keepBell() throws SQLException {
        Connection b = bell;
        long now = System.nanoTime();
        if (b != null && now - bellAnsweredAt >= BELL_PING_NANOS) {
            try (java.sql.Statement s = b.createStatement()) {
                s.execute("SELECT 1");
            }
            bellAnsweredAt = now;
        }
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
            log.log(
                    System.Logger.Level.WARNING,
                    "Lease wake-ups (table " + table + ") stopped: blocking"
                            + " lease waiters poll until the wake-up connection is back",
                    e);
            outageReported = true;
        }
    }

    /**
     * Closes both connections for good (their sessions end, and their locks with them): retired, so that the pool
     * never lends them again; a release's kill that comes late then finds no session of that id, where a pooled one
     * would run somebody else's statement.
     */
    void close() {
        Connection c = connection;
        Connection b = bell;
        connection = null;
        bell = null;
        listener = null;
        // Its live lock given back, releases hand nothing to it, even should the abort fail and the pool keep it.
        end(c);
        end(b);
    }

    /** How many connections were handed to the pool to retire. */
    long retired() {
        return retired.get();
    }

    /** Gives the user-level locks of {@code c} back, then has the pool retire it. */
    private void end(@Nullable Connection c) {
        if (c == null) {
            return;
        }
        try (java.sql.Statement s = c.createStatement()) {
            s.execute(MariaDbLeaseSql.RELEASE_LOCKS);
        } catch (SQLException | RuntimeException ignored) {
            // broken: its session, and its locks, end with it
        }
        retired.incrementAndGet();
        try {
            pool.retire(c);
        } catch (SQLException | RuntimeException e) {
            // A retirer that failed may leave the connection to the pool: its locks were given back above.
            log.log(System.Logger.Level.DEBUG, "Lease wake-ups (table " + table + "): retiring a connection failed", e);
        }
    }
}
