package dev.holdfast.lease.internal;

import dev.holdfast.jdbc.ConnectionPool;
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
 * twice as long each time up to 30 s. Each stretch without them is logged once at INFO; once the pool's maximum
 * size is known to be too small, or it has had no room {@value #WARN_AFTER} times in a row (some 3 s), a warning
 * names the pool size to set (once per service).
 */
final class SpareConnections {

    /** The wake-ups' logger: one name for what an operator reads about them (no class reference: no cycle). */
    private static final System.Logger LOG = System.getLogger("dev.holdfast.lease.internal.MariaDbWakeUps");

    /** Failed borrows in a row after which a pool counts as too small, not just busy for a moment. */
    static final int WARN_AFTER = 5;

    private final BoundedBorrow borrow;
    private final ConnectionPool pool;
    private final String table;
    private long notBefore = System.nanoTime();
    private long backoff = TimeUnit.MILLISECONDS.toNanos(100);
    /** Whether the pool once lent a connection besides the kept one: it has room for it, no need to ask again. */
    private boolean spareSeen;

    private boolean reported;
    /** Borrows in a row that found the pool without room. */
    private int failedInARow;
    /** Whether the warning that the pool is too small was logged: once per service. */
    private boolean warned;

    SpareConnections(DataSource dataSource, ConnectionPool pool, LeaseThreads threads, String table) {
        this.borrow = new BoundedBorrow(dataSource, threads);
        this.pool = pool;
        this.table = table;
    }

    /** {@code count} connections to keep (auto-commit), or null while the pool has none to spare beside them. */
    @Nullable
    List<Connection> borrow(int count) throws SQLException {
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
            failedInARow++;
            int maximum = pool.maximumSize();
            if (!warned && (failedInARow >= WARN_AFTER || (maximum > 0 && maximum < count + 1))) {
                LOG.log(System.Logger.Level.WARNING, tooSmall(count, kept.size() + (spare == null ? 0 : 1), maximum));
                warned = true;
            } else if (!reported) {
                LOG.log(
                        System.Logger.Level.INFO,
                        "Lease wake-ups (table " + table + ") wait for the pool to" + " lend " + count
                                + " connections besides the service's own: blocking lease waiters poll meanwhile");
            }
            reported = true;
            notBefore = System.nanoTime() + backoff;
            backoff = Math.min(TimeUnit.SECONDS.toNanos(30), backoff * 2);
            return null;
        }
        reported = false;
        failedInARow = 0;
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

    /** The warning that the pool lent only {@code lent} of the {@code count} kept connections and one spare. */
    private String tooSmall(int count, int lent, int maximum) {
        int needed = count + 1;
        String size = maximum > 0
                ? "set its maximum size (HikariCP: maximumPoolSize) to " + Math.max(needed, maximum + needed - lent)
                        + " or more (it is " + maximum + ")"
                : "raise its maximum size (HikariCP: maximumPoolSize) by " + (needed - lent) + ", to " + needed
                        + " at least";
        return "Lease wake-ups (table " + table + ") need " + needed + " connections of the pool at once (" + count
                + " kept while calls wait, 1 left for the service's own statements), and it lent " + lent
                + ": blocking lease waiters poll instead of being woken while the pool has no room; " + size;
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
