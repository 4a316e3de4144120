package dev.holdfast.lease.internal;

import dev.holdfast.jdbc.dialect.Dialect;

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

    /** What {@link #acquireQueuedSql()} binds after name, owner and ttl micros, in order. */
    public abstract List<String> queuedBinds(String name, String waiter);

    /**
     * Joins the queue, or refreshes this waiter's entry (an entry that had lapsed goes to the back).
     * Binds name, waiter, entry lifetime micros.
     */
    public abstract String joinQueueSql();
}
