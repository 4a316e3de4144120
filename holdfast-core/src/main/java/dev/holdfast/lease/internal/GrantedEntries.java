package dev.holdfast.lease.internal;

import dev.holdfast.jdbc.dialect.SqlErrorKind;
import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The queue entries of a MariaDB service's waiters granted through the queue, left on its wake-up
 * connection after their grants returned ({@link MariaDbWakeUps}), or handed to a {@link Leaving} (a
 * pooled connection in the background) when that connection fails.
 * Thread-safe.
 */
final class GrantedEntries {

    /** The queue entry of a granted waiter, which lapses by itself at {@code lapsesAt} ({@link System#nanoTime()}). */
    record Leave(String name, String waiter, long lapsesAt) {}

    /** Leaves a queue entry some other way (on a pooled connection, retrying until it lapses). */
    interface Leaving {
        void leave(String name, String waiter, long lapsesAt);
    }

    /** Opens the connection to leave on, or null without one. */
    interface Opener {
        @Nullable
        Connection open() throws SQLException;
    }

    private final LeaseSql sql;
    /** By waiter id (guarded by this). */
    private final Map<String, Leave> pending = new HashMap<>();
    /** Until set, an entry that cannot be left lapses. */
    private volatile Leaving elsewhere = (name, waiter, lapsesAt) -> {};

    GrantedEntries(LeaseSql sql) {
        this.sql = sql;
    }

    synchronized void add(Leave entry) {
        pending.put(entry.waiter(), entry);
    }

    void elsewhere(Leaving leaving) {
        this.elsewhere = leaving;
    }

    /**
     * Leaves every pending entry on the connection {@code opener} gives; without one, elsewhere. An entry whose
     * leave was a deadlock victim (nothing changed) stays pending for the next call: a release's hand-off locks the
     * queue's index and then the entry, the leave the other way round, and InnoDB rolls one back. The connection is
     * fine, and such an entry is behind the served mark, which no release hands the lease to. One whose leave ran
     * out of lock wait goes elsewhere, so that this connection does not wait that long again.
     *
     * @return whether any statement ran
     */
    boolean leave(Opener opener) throws SQLException {
        List<Leave> entries;
        synchronized (this) {
            if (pending.isEmpty()) {
                return false;
            }
            entries = List.copyOf(pending.values());
        }
        boolean ran = false;
        for (Leave entry : entries) {
            Connection c = opener.open();
            if (c == null) {
                handOver(entry);
                continue;
            }
            ran = true;
            try {
                sql.leaveQueue(c, entry.name(), entry.waiter());
            } catch (SQLException e) {
                SqlErrorKind kind = sql.dialect.classify(e);
                if (kind == SqlErrorKind.LOCK_TIMEOUT) {
                    handOver(entry); // a lock held that long would stall this connection's watches every round
                    continue;
                }
                if (kind != SqlErrorKind.DEADLOCK) {
                    throw e;
                }
                continue;
            }
            synchronized (this) {
                pending.remove(entry.waiter());
            }
        }
        return ran;
    }

    /** After the connection failed, or when closed: every pending entry, elsewhere. */
    void handOverAll() {
        List<Leave> entries;
        synchronized (this) {
            entries = List.copyOf(pending.values());
        }
        entries.forEach(this::handOver);
    }

    private void handOver(Leave entry) {
        synchronized (this) {
            if (pending.remove(entry.waiter()) == null) {
                return;
            }
        }
        elsewhere.leave(entry.name(), entry.waiter(), entry.lapsesAt());
    }
}
