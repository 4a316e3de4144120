package dev.holdfast.lease.internal;

import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * Borrows a connection that a service keeps for itself (MariaDB wake-ups) only where the pool has
 * one to spare: until the pool once lent one more at once (within 50 ms), the service's own
 * statements might wait for the kept one, so it is given back and asked for again after 0.1 s, then
 * twice as long each time up to 30 s (logged once at INFO until it is had).
 */
final class SpareConnections {

    /** The wake-ups' logger: one name for what an operator reads about them (no class reference: no cycle). */
    private static final System.Logger LOG = System.getLogger("dev.holdfast.lease.internal.MariaDbWakeUps");

    private final BoundedBorrow borrow;
    private final String table;
    private long notBefore = System.nanoTime();
    private long backoff = TimeUnit.MILLISECONDS.toNanos(100);
    /** Whether the pool once lent a connection besides the kept one: it has room for it, no need to ask again. */
    private boolean spareSeen;
    private boolean reported;

    SpareConnections(DataSource dataSource, LeaseThreads threads, String table) {
        this.borrow = new BoundedBorrow(dataSource, threads);
        this.table = table;
    }

    /** A connection to keep (auto-commit), or null while the pool has none to spare. */
    @Nullable Connection borrow() throws SQLException {
        long now = System.nanoTime();
        if (now - notBefore < 0) {
            return null;
        }
        Connection c;
        Connection spare;
        try {
            c = borrow.borrow(now + TimeUnit.SECONDS.toNanos(1));
            spare = c == null || spareSeen ? c : borrow.borrow(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        if (spare != null && spare != c) {
            spare.close();
        }
        if (c == null || spare == null) {
            if (c != null) {
                c.close();
            }
            if (!reported) {
                LOG.log(System.Logger.Level.INFO, "Lease wake-ups (table " + table + ") wait for the pool to"
                        + " lend a connection besides the service's own: blocking lease waiters poll meanwhile");
            }
            reported = true;
            notBefore = System.nanoTime() + backoff;
            backoff = Math.min(TimeUnit.SECONDS.toNanos(30), backoff * 2);
            return null;
        }
        reported = false;
        spareSeen = true;
        c.setAutoCommit(true);
        return c;
    }

    /** When a connection may be asked for again ({@link System#nanoTime()}). */
    long notBefore() {
        return notBefore;
    }
}
