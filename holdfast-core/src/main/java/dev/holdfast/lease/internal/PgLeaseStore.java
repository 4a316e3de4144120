package dev.holdfast.lease.internal;

import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;

/**
 * PostgreSQL's leases ({@link PgLeaseSql}): a blocking acquire's attempt queues in the same
 * statement; a release that finds waiters hands the lease to the first live one and notifies it
 * ({@link PgWakeUps}); batches bind arrays.
 */
final class PgLeaseStore extends LeaseStore {

    private final PgLeaseSql sql;
    /** An update followed by the hand-off, by update. */
    private final Map<String, String> updatesWithHandOff = new ConcurrentHashMap<>();

    PgLeaseStore(PgLeaseSql sql) {
        super(sql);
        this.sql = sql;
    }

    /** Notified waiters: on a connection of the listener's own data source, if set, else of the service's pool. */
    @Override
    WakeUps wakeUps(LeaseSettings s, LocalPollers pollers, LeaseThreads threads) {
        DataSource direct = s.listenerDataSource();
        return new PgWakeUps(
                direct != null ? direct : s.dataSource(),
                sql,
                s.tuning().notifyProbe().toMillis(),
                pollers);
    }

    @Override
    @Nullable
    BatchLeaseSql batchSql() {
        return sql;
    }

    @Override
    public Optional<LeaseRow> acquireOrQueue(
            Connection c,
            String name,
            String owner,
            String waiter,
            long ttlMicros,
            long queueMicros,
            boolean joined,
            boolean refresh,
            boolean leave,
            @Nullable Integer listener)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.acquireOrQueueSql())) {
            sql.bindAcquireOrQueue(ps, name, owner, ttlMicros, waiter, queueMicros, listener);
            try (ResultSet rs = ps.executeQuery()) {
                return granted(rs, name, owner);
            }
        }
    }

    /** Also gives back a grant handed to the waiter meanwhile (which then goes to the next waiter), unless its call was {@code granted}. */
    @Override
    public void giveUp(Connection c, String name, String waiter, boolean granted) throws SQLException {
        if (granted) {
            super.giveUp(c, name, waiter, true);
            return;
        }
        try (PreparedStatement ps = c.prepareStatement(sql.giveUpSql())) {
            int i = 1;
            for (String value : sql.giveUpBinds(name, waiter)) {
                ps.setString(i++, value);
            }
            ps.execute();
            drain(ps);
        }
    }

    /**
     * The update, then where it reports that someone may wait, the hand-off: in the same transaction
     * on a manual-commit connection, else in one of its own. With {@code withHandOff}, the update and
     * the hand-off go in one round trip instead ({@link PgLeaseSql#withHandOffSql}: the hand-off
     * grants nothing if the update did not match or nobody waits after all).
     */
    @Override
    boolean update(Connection c, String update, String name, boolean withHandOff, Binder bind) throws SQLException {
        if (withHandOff) {
            return updateWithHandOff(c, update, name, bind);
        }
        boolean waiters;
        try (PreparedStatement ps = c.prepareStatement(update)) {
            bind.bind(ps);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return false;
                }
                waiters = rs.getBoolean(2);
            }
        }
        if (waiters) {
            contended.found(name, true);
            handOff(c, name);
        }
        return true;
    }

    /** The update and the hand-off in one round trip; the update's own answer keeps or drops the hint. */
    private boolean updateWithHandOff(Connection c, String update, String name, Binder bind) throws SQLException {
        String both = updatesWithHandOff.computeIfAbsent(update, sql::withHandOffSql);
        try (PreparedStatement ps = c.prepareStatement(both)) {
            int i = bind.bind(ps);
            ps.setString(i++, name);
            ps.setString(i, name);
            ps.execute();
            boolean matched;
            boolean waiters;
            try (ResultSet rs = ps.getResultSet()) {
                matched = rs.next();
                waiters = matched && rs.getBoolean(2);
            }
            drain(ps);
            if (matched) { // a refused update tells nothing about waiters
                contended.found(name, waiters);
            }
            return matched;
        }
    }

    /** Hands a free lease to its first live waiter ({@link PgLeaseSql#handOffSql}): after a release that reported waiters. */
    @Override
    public void handOff(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.handOffSql())) {
            ps.setString(1, name);
            ps.setString(2, name);
            ps.setString(3, name);
            ps.execute();
            drain(ps);
        }
    }
}
