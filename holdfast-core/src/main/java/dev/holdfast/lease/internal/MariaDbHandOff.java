package dev.holdfast.lease.internal;

import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import dev.holdfast.jdbc.dialect.Dialect;

/**
 * MariaDB's direct hand-off, run on a connection it is given: the release that grants a free lease
 * to the first live waiter in its own statement ({@link MariaDbLeaseSql#releaseHandingOffSql}), the
 * give-up that returns such a grant, and the lock by which a wake-up connection says its service is
 * alive to hand leases to.
 */
final class MariaDbHandOff {

    private MariaDbHandOff() {
    }

    /**
     * What a sleep on a bell found ({@link MariaDbLeaseSql#bellSleepSql}): whether it took the bell (and
     * holds it still: not {@code passed}), whether the lease was live then, the waiter id it was handed
     * to (null for none), that grant, and whether the statement gave the bell back, the lease being
     * handed to another service's waiter.
     */
    record Woken(boolean took, boolean live, @Nullable String handedTo, PgWakeUps.@Nullable Handed grant,
                 boolean passed) {
    }

    /** Sleeps on {@code bell} at most {@code seconds}, then reads lease {@code name}. */
    static Woken sleep(Connection c, MariaDbLeaseSql sql, String bell, double seconds, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.bellSleepSql())) {
            ps.setString(1, bell);
            ps.setString(2, bell);
            ps.setDouble(3, seconds);
            ps.setString(4, name);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                boolean took = rs.getLong(1) == 1;
                String handedTo = rs.getString(2);
                boolean live = rs.getBoolean(6);
                Instant acquiredAt = Dialect.MARIADB.readInstant(rs, 4);
                Instant expiresAt = Dialect.MARIADB.readInstant(rs, 5);
                PgWakeUps.Handed grant = took && live && handedTo != null && acquiredAt != null && expiresAt != null
                        ? new PgWakeUps.Handed(rs.getLong(3), acquiredAt, expiresAt) : null;
                boolean passed = rs.getLong(7) == 1;
                return new Woken(took && !passed, took && live, grant == null ? null : handedTo, grant, passed);
            }
        }
    }

    /** What a release did: whether the grant was held and, if so, whether the row says a waiter may still be queued. */
    record Released(boolean held, boolean queued) {
    }

    /**
     * Expires the caller's live grant, handing the lease to the first live waiter: what a release sends when
     * the row says a waiter may be queued (its plain release, {@link MariaDbLeaseSql#releaseSql}, then matches
     * nothing).
     */
    static Released release(Connection c, MariaDbLeaseSql sql, String name, String owner, @Nullable Long token)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.releaseHandingOffSql(token != null))) {
            ps.setString(1, name);
            ps.setString(2, owner);
            if (token != null) {
                ps.setLong(3, token);
            }
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new Released(true, rs.getBoolean(3)) : new Released(false, false);
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
