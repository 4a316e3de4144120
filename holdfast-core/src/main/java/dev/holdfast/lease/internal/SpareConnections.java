package dev.holdfast.lease.internal;

import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * Borrows connections that a service keeps for itself (MariaDB wake-ups) only where the pool has
 * them to spare: until the pool once lent one more at once (within 50 ms), the service's own
 * statements might wait for the kept ones, so they are given back and asked for again after 0.1 s, then
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

    /** {@code count} connections to keep (auto-commit), or null while the pool has none to spare beside them. */
    @Nullable List<Connection> borrow(int count) throws SQLException {
        long now = System.nanoTime();
        if (now - notBefore < 0) {
            return null;
        }
        List<Connection> kept = new ArrayList<>(count);
        Connection spare = null;
        try {
            for (int i = 0; i < count; i++) {
                Connection c = borrow.borrow(System.nanoTime() + TimeUnit.SECONDS.toNanos(1));
                if (c == null) {
                    break;
                }
                kept.add(c);
            }
            if (kept.size() == count && !spareSeen) {
                spare = borrow.borrow(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closeAll(kept);
            throw new IllegalStateException("interrupted", e);
        } catch (RuntimeException e) { // a pool that failed: nothing borrowed stays out
            closeAll(kept);
            throw e;
        }
        if (spare != null) {
            BoundedBorrow.closeQuietly(spare);
        }
        if (kept.size() < count || (spare == null && !spareSeen)) {
            closeAll(kept);
            if (!reported) {
                LOG.log(System.Logger.Level.INFO, "Lease wake-ups (table " + table + ") wait for the pool to"
                        + " lend " + count + " connections besides the service's own: blocking lease waiters poll meanwhile");
            }
            reported = true;
            notBefore = System.nanoTime() + backoff;
            backoff = Math.min(TimeUnit.SECONDS.toNanos(30), backoff * 2);
            return null;
        }
        reported = false;
        spareSeen = true;
        try {
            for (Connection c : kept) {
                c.setAutoCommit(true);
            }
        } catch (SQLException | RuntimeException e) {
            closeAll(kept);
            throw e;
        }
        return kept;
    }

    private static void closeAll(List<Connection> connections) {
        for (Connection c : connections) {
            BoundedBorrow.closeQuietly(c);
        }
    }

    /** When a connection may be asked for again ({@link System#nanoTime()}). */
    long notBefore() {
        return notBefore;
    }
}
