package dev.holdfast.lease.internal;

import dev.holdfast.jdbc.dialect.Dialect;
import org.jspecify.annotations.Nullable;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;

/**
 * The lease statements of a database whose waiters poll (H2, MariaDB): a blocking acquire's attempt
 * is an acquire that refuses while an earlier live waiter is queued, then a statement that leaves the
 * queue on a grant or joins it on a refusal; a release wakes nobody in the database (a release
 * through the same service wakes its oldest poller in memory).
 */
public abstract class PollingLeaseSql extends LeaseSql {

    protected PollingLeaseSql(String table, Dialect dialect) {
        super(table, dialect);
    }

    /**
     * The exclusive acquire that also refuses while a live waiter queued before this one (binds name,
     * owner, ttl micros, then {@link #queuedBinds}); returns as the acquire.
     */
    public abstract String acquireQueuedSql();

    /**
     * What {@link #acquireQueuedSql()} binds after name, owner and ttl micros, in order, for a waiter whose
     * queue entry lives {@code queueMicros} from its join.
     */
    public abstract List<Object> queuedBinds(String name, String waiter, long queueMicros);

    /**
     * Joins the queue, or refreshes this waiter's entry (an entry that had lapsed goes to the back).
     * Binds as {@link #bindJoin}.
     */
    public abstract String joinQueueSql();

    /**
     * Binds {@link #joinQueueSql()}: name, waiter, entry lifetime micros; where releases hand the lease
     * to waiters (MariaDB), also what to grant (the lease's owner and TTL) and the connection id of the
     * service's live wake-up connection ({@code listener}, null for none: no hand-off to this waiter).
     */
    public void bindJoin(
            PreparedStatement ps,
            String name,
            String waiter,
            long queueMicros,
            String owner,
            long ttlMicros,
            @Nullable Integer listener)
            throws SQLException {
        ps.setString(1, name);
        ps.setString(2, waiter);
        ps.setLong(3, queueMicros);
    }

    /** Joins the queue, or refreshes the entry, on {@code c} ({@link #joinQueueSql()}, bound as {@link #bindJoin}). */
    void join(
            java.sql.Connection c,
            String name,
            String waiter,
            long queueMicros,
            String owner,
            long ttlMicros,
            @Nullable Integer listener)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(joinQueueSql())) {
            bindJoin(ps, name, waiter, queueMicros, owner, ttlMicros, listener);
            ps.executeUpdate();
        }
    }
}
