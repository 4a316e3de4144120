package dev.holdfast.lease.internal;

import dev.holdfast.internal.Invariants;
import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;

/**
 * The one read a blocking acquire makes when its bound ran out ({@link LeaseSql#timeoutSql}): who
 * held the lease and how many live waiters had queued before the caller. Never on the success path.
 */
final class TimeoutLook {

    /** How long the read may take, in seconds: a stuck read must not hold the caller long past its bound. */
    static final int QUERY_TIMEOUT_SECONDS = 1;

    private final LeaseSql sql;

    TimeoutLook(LeaseSql sql) {
        this.sql = sql;
    }

    /**
     * What the database shows now for {@code name}, with the caller's queue entry {@code waiter}
     * (null if it had none: then every live waiter counts as ahead).
     */
    WaitTimedOut.Seen read(Connection c, String name, @Nullable String waiter) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.timeoutSql())) {
            ps.setQueryTimeout(QUERY_TIMEOUT_SECONDS);
            int i = 1;
            for (String value : sql.timeoutBinds(name, waiter == null ? "" : waiter)) {
                ps.setString(i++, value);
            }
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new IllegalStateException("the read returned no row"); // it selects from a one-row table
                }
                String holder = rs.getString(1);
                Instant at = Invariants.nonNull(sql.dialect.readInstant(rs, 5), "the database's clock");
                int ahead = rs.getInt(6);
                if (holder == null) {
                    return new WaitTimedOut.Seen(null, ahead, at, null);
                }
                LeaseRow row = new LeaseRow(
                        name,
                        holder,
                        rs.getLong(2),
                        Invariants.nonNull(sql.dialect.readInstant(rs, 3), "acquired_at is NOT NULL"),
                        Invariants.nonNull(sql.dialect.readInstant(rs, 4), "expires_at is NOT NULL"));
                return new WaitTimedOut.Seen(row, ahead, at, null);
            }
        }
    }

    /** Why nothing is known when the read failed with {@code e}. */
    static String failed(Exception e) {
        return e instanceof SQLException sql
                ? "the read failed: " + sql.getMessage() + " [SQLState " + sql.getSQLState() + ", code "
                        + sql.getErrorCode() + "]"
                : "the read failed: " + e;
    }
}
