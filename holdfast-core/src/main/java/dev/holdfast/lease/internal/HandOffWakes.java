package dev.holdfast.lease.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * MariaDB: after a release handed the lease to a waiter, wakes that waiter's service by ending the
 * wait of its wake-up connection ({@code KILL QUERY}, {@link MariaDbWakeUps}), which then reads the
 * grant and gives it to the waiting call. A wake-up is a hint: one that fails costs the waiter the
 * rest of that wait (at most a quarter of a second) or its own next look, whichever comes first.
 * Where the server refuses (a connection of another database user, without {@code CONNECTION ADMIN}),
 * this service stops trying, and says so once.
 */
final class HandOffWakes {

    /** The wake-ups' logger: one name for what an operator reads about them. */
    private static final System.Logger LOG = System.getLogger("dev.holdfast.lease.internal.MariaDbWakeUps");
    /** {@code ER_KILL_DENIED_ERROR}: not this user's connection, and no right to kill others'. */
    private static final int KILL_DENIED = 1095;

    private final java.util.concurrent.atomic.AtomicBoolean refused = new java.util.concurrent.atomic.AtomicBoolean();
    private final NextWaiters nextWaiters = new NextWaiters();

    /** Whom the releases of leases just handed to this service hand them to next, as its wake-up connection read. */
    NextWaiters nextWaiters() {
        return nextWaiters;
    }

    /**
     * Ends the statement the wake-up connection {@code listener} runs now, on {@code c}, an auto-commit
     * connection whose release committed the hand-off (on a connection in a transaction, nothing: the
     * hand-off is not visible before its commit, and the waiter's next look takes it).
     */
    void wake(Connection c, long listener) {
        if (refused.get()) {
            return;
        }
        try {
            if (!c.getAutoCommit()) {
                return;
            }
            try (PreparedStatement ps = c.prepareStatement(MariaDbLeaseSql.WAKE)) {
                ps.setLong(1, listener);
                ps.execute();
            }
        } catch (SQLException e) {
            if (e.getErrorCode() == KILL_DENIED && refused.compareAndSet(false, true)) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "Lease hand-offs no longer wake waiters of other services"
                                + " at once: the database user may not end their statements (KILL QUERY needs the same user or"
                                + " CONNECTION ADMIN); those waiters take their leases at their next look",
                        e);
            }
            // Else (1094: that connection ended meanwhile) its waiters look by themselves.
        }
    }
}
