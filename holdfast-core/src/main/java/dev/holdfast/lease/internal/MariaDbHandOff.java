package dev.holdfast.lease.internal;

import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.jdbc.dialect.SqlErrorKind;
import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * MariaDB's direct hand-off, run on a connection it is given: the release that grants a free lease
 * to the first live waiter in its own statement ({@link MariaDbLeaseSql#releaseHandingOffSql}), the
 * give-up that returns such a grant, the lock by which a wake-up connection says its service is
 * alive to hand leases to, and how that connection learns of a hand-off (it watches, a release wakes it).
 */
final class MariaDbHandOff {

    private MariaDbHandOff() {}

    /** A live grant handed to waiter {@code waiter} of lease {@code name}, whose entry names the reading connection. */
    record HandedHere(String name, String waiter, Waiter.Handed grant) {}

    /** How a wake-up connection's watch ended. */
    enum Watched {
        /** A grant handed here was found, without waiting. */
        HANDED,
        /** The wait's bound passed. */
        QUIET,
        /** A release's kill ended it: read what was handed here. */
        WOKEN,
        /** The doorbell was free, so its holder is gone; the watcher holds it now (it closes). */
        BELL_FREE
    }

    /**
     * Waits at most {@code seconds} for the doorbell of {@code c} unless a live lease is handed to a waiter whose
     * entry names {@code c}, other than the grants in {@code seen} ({@link MariaDbLeaseSql#watchSql}).
     */
    static Watched watch(Connection c, MariaDbLeaseSql sql, List<HandedHere> seen, double seconds) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.watchSql(seen.size()))) {
            int i = 1;
            for (HandedHere h : seen) {
                ps.setString(i++, h.name());
                ps.setLong(i++, h.grant().token());
            }
            ps.setDouble(i, seconds);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long result = rs.getLong(1);
                if (rs.wasNull()) {
                    return Watched.WOKEN; // a killed lock wait returns NULL
                }
                return result == 2 ? Watched.HANDED : result == 0 ? Watched.QUIET : Watched.BELL_FREE;
            }
        } catch (SQLException e) {
            if (interrupted(e)) { // the kill met the statement before its wait
                return Watched.WOKEN;
            }
            throw e;
        }
    }

    /** Takes, on {@code holder}, the doorbell that wake-up connection {@code listener} waits for; true if taken. */
    static boolean holdBell(Connection holder, long listener) throws SQLException {
        try (PreparedStatement ps = holder.prepareStatement(MariaDbLeaseSql.BELL_HOLD)) {
            ps.setLong(1, listener);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getLong(1) == 1;
            }
        }
    }

    /** The live grants handed to waiters whose entries name {@code c} ({@link MariaDbLeaseSql#handedHereSql}). */
    static List<HandedHere> handedHere(Connection c, MariaDbLeaseSql sql) throws SQLException {
        List<HandedHere> handed = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql.handedHereSql());
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                Instant acquiredAt = Dialect.MARIADB.readInstant(rs, 4);
                Instant expiresAt = Dialect.MARIADB.readInstant(rs, 5);
                if (acquiredAt != null && expiresAt != null) {
                    handed.add(new HandedHere(
                            rs.getString(1), rs.getString(2), new Waiter.Handed(rs.getLong(3), acquiredAt, expiresAt)));
                }
            }
        }
        return handed;
    }

    /** MariaDB's "Query execution was interrupted": a {@code KILL QUERY} ended the statement, and nothing else. */
    static boolean interrupted(SQLException e) {
        return e.getErrorCode() == 1317;
    }

    /**
     * What a release did: whether the grant was held and, if so, whether the row says a waiter may still be
     * queued, and the wake-up connection of the waiter it handed the lease to (null if it handed nothing).
     */
    record Released(boolean held, boolean queued, @Nullable Long wake) {}

    /**
     * Expires the caller's live grant, handing the lease to the first live waiter, then wakes that waiter's
     * service ({@link HandOffWakes}): what a release sends when the row says a waiter may be queued (its plain
     * release, {@link MariaDbLeaseSql#releaseSql}, then matches nothing). A hand-off that InnoDB picks as a deadlock
     * victim runs again (at most {@link LeaseCalls#ATTEMPTS_ON_RACE} times in all).
     */
    static Released release(
            Connection c, MariaDbLeaseSql sql, String name, String owner, @Nullable Long token, HandOffWakes wakes)
            throws SQLException {
        QueuedWaiter next = wakes.nextWaiters().take(name, token);
        Released released;
        for (int attempt = 1; ; attempt++) {
            try {
                released = releaseHandingOff(c, sql, name, owner, token, next);
                break;
            } catch (SQLException e) {
                // A deadlock victim: the hand-off locks the queue's index records, then an entry; a granted waiter's
                // leave locks them the other way round. Nothing was written (the write that succeeds ends the
                // hand-off), so
                // it runs again, reading the first waiter itself.
                if (attempt >= LeaseCalls.ATTEMPTS_ON_RACE || Dialect.MARIADB.classify(e) != SqlErrorKind.DEADLOCK) {
                    throw e;
                }
                next = null;
            }
        }
        if (released.wake() != null) {
            wakes.wake(c, released.wake());
        }
        return released;
    }

    /**
     * The cheaper hand-off where it applies (measured: a plain read and a primary-key update cost less than the
     * one statement, which sorts the queue in a temporary table and takes the queue's locks): the first waiter,
     * as read when the lease was handed here ({@code next}) or read now, is handed the lease if it is still the
     * first and its service alive ({@link MariaDbLeaseSql#handToSql}). Else — no waiter (the one statement's locks
     * keep a waiter that queues meanwhile from being passed by), its service gone (nobody is handed the lease), or
     * the update matched nothing (the entry went, an earlier join committed meanwhile, or the lease went) — the one
     * statement decides.
     */
    private static Released releaseHandingOff(
            Connection c,
            MariaDbLeaseSql sql,
            String name,
            String owner,
            @Nullable Long token,
            @Nullable QueuedWaiter next)
            throws SQLException {
        if (next != null && handTo(c, sql, name, owner, token, next)) {
            return new Released(true, true, next.listener());
        }
        QueuedWaiter first;
        try (PreparedStatement ps = c.prepareStatement(sql.firstWaiterSql(token != null))) {
            bindNameOwnerToken(ps, 1, name, owner, token);
            first = firstWaiter(ps);
        }
        if (first != null && !first.equals(next) && handTo(c, sql, name, owner, token, first)) {
            return new Released(true, true, first.listener()); // handed: a waiter was queued
        }
        return releaseHandingOffInOneStatement(c, sql, name, owner, token);
    }

    /**
     * MariaDB's wake-up connection, right after it gave a grant to a waiting call of this service: reads whom that
     * grant's release will hand the lease to, so that the release does not read it (off the path from a release to
     * the next grant). Null if nobody waits or the first waiter's service is gone.
     */
    static @Nullable QueuedWaiter nextWaiter(Connection c, MariaDbLeaseSql sql, String name, long token)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.nextWaiterSql())) {
            ps.setString(1, name);
            ps.setLong(2, token);
            return firstWaiter(ps);
        }
    }

    /** Runs a {@link MariaDbLeaseSql#firstWaiterSql}: the waiter if there is one whose service is alive. */
    private static @Nullable QueuedWaiter firstWaiter(PreparedStatement ps) throws SQLException {
        try (ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) {
                return null;
            }
            String waiter = rs.getString(1);
            String leaseOwner = rs.getString(2);
            long ttlMicros = rs.getLong(3);
            boolean noTtl = rs.wasNull();
            long listener = rs.getLong(4);
            boolean noListener = rs.wasNull();
            String place = rs.getString(5);
            boolean alive = rs.getBoolean(6);
            return alive && leaseOwner != null && !noTtl && !noListener
                    ? new QueuedWaiter(waiter, leaseOwner, ttlMicros, listener, place)
                    : null;
        }
    }

    /** Hands the caller's live lease to {@code w} if it is still the first live waiter ({@link MariaDbLeaseSql#handToSql}). */
    private static boolean handTo(
            Connection c, MariaDbLeaseSql sql, String name, String owner, @Nullable Long token, QueuedWaiter w)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.handToSql(token != null))) {
            ps.setString(1, w.leaseOwner());
            ps.setLong(2, w.ttlMicros());
            ps.setString(3, w.waiter());
            ps.setString(4, w.place());
            int i = bindNameOwnerToken(ps, 5, name, owner, token);
            ps.setString(i++, w.place());
            ps.setLong(i++, w.listener());
            ps.setString(i++, w.leaseOwner());
            ps.setLong(i, w.ttlMicros());
            return ps.executeUpdate() == 1;
        }
    }

    private static int bindNameOwnerToken(
            PreparedStatement ps, int first, String name, String owner, @Nullable Long token) throws SQLException {
        int i = first;
        ps.setString(i++, name);
        ps.setString(i++, owner);
        if (token != null) {
            ps.setLong(i++, token);
        }
        return i;
    }

    private static Released releaseHandingOffInOneStatement(
            Connection c, MariaDbLeaseSql sql, String name, String owner, @Nullable Long token) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.releaseHandingOffSql(token != null))) {
            ps.setString(1, name);
            ps.setString(2, owner);
            if (token != null) {
                ps.setLong(3, token);
            }
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return new Released(false, false, null);
                }
                boolean queued = rs.getBoolean(3);
                long wake = rs.getLong(4);
                return new Released(true, queued, rs.wasNull() ? null : wake);
            }
        }
    }

    /**
     * A queued attempt that only reads where it can: joins the queue (or refreshes its entry) if {@code join},
     * then reads whether the waiter can only wait ({@link MariaDbLeaseSql#waitsOnSql}). For an auto-commit
     * connection only: there the entry is visible to every release from the read on, so one that comes after the
     * read hands the lease on (in a transaction, a release could pass the uncommitted entry by).
     *
     * @return true if the waiter waits (refused, its entry in place); false if the attempt must be the queued
     * acquire, which may grant (then the entry joined here is left; refused, joining again refreshes it)
     */
    static boolean waitsOn(
            Connection c,
            MariaDbLeaseSql sql,
            String name,
            String owner,
            String waiter,
            long ttlMicros,
            long queueMicros,
            boolean join,
            @Nullable Integer listener)
            throws SQLException {
        if (join) {
            sql.join(c, name, waiter, queueMicros, owner, ttlMicros, listener);
        }
        try (PreparedStatement ps = c.prepareStatement(sql.waitsOnSql())) {
            ps.setString(1, waiter);
            ps.setString(2, name);
            ps.setString(3, owner);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    /** Moves {@code waiter}'s entry behind the served mark ({@link MariaDbLeaseSql#servedPast}). */
    static void requeue(Connection c, MariaDbLeaseSql sql, String name, String waiter) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.requeueSql())) {
            ps.setString(1, waiter);
            ps.setString(2, name);
            ps.executeUpdate();
        }
    }

    /** Leaves the queue for good, giving back a grant a release handed to {@code waiter} meanwhile. */
    static void giveUp(Connection c, MariaDbLeaseSql sql, String name, String waiter) throws SQLException {
        for (String statement : sql.giveUpSqls()) {
            try (PreparedStatement ps = c.prepareStatement(statement)) {
                ps.setString(1, name);
                ps.setString(2, waiter);
                ps.executeUpdate();
            }
        }
    }

    /**
     * Takes the lock by which {@code c}, a service's wake-up connection, says that the service is alive
     * ({@link MariaDbLeaseSql#LIVE_LOCK}); held until its session ends or it gives back all its locks.
     *
     * @return the connection id waiters publish in their queue entries, or null if the lock is not
     * held (a connection id above {@code int}'s range is not published either: no hand-off then)
     */
    static @Nullable Integer markAlive(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(MariaDbLeaseSql.LIVE_LOCK);
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            long id = rs.getLong(2);
            return rs.getLong(1) == 1 && id <= Integer.MAX_VALUE ? (int) id : null;
        }
    }
}
