package dev.holdfast.pessimistic;

import dev.holdfast.jdbc.internal.Jdbc;
import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * Reads who blocks a waiting session, on a connection of its own borrowed from {@code source}
 * (in auto-commit, or committed at once, so it goes back clean): the reading of
 * {@link BlockerSql}, repeated every {@link BlockerSql#rereadMillis()} while the session is not
 * yet seen waiting and its lock's deadline has not passed, until the lock call ends.
 */
final class BlockerProbe {

    /** Longest a reading may run (a statement timeout of its own). */
    static final int QUERY_TIMEOUT_SECONDS = 5;

    private final BlockerSql sql;
    private final DataSource source;

    BlockerProbe(BlockerSql sql, DataSource source) {
        this.sql = sql;
        this.source = source;
    }

    /**
     * @param session  the waiting session's id
     * @param deadline {@link System#nanoTime()} at which the lock's bound runs out
     * @param ended    counted down when the lock call ends: stop reading
     */
    Blockers observe(String session, long deadline, CountDownLatch ended) {
        int readings = 0;
        try (Connection c = source.getConnection()) {
            while (true) {
                long readAt = System.nanoTime();
                BlockerSql.Reading reading = Jdbc.autocommit(c, connection -> read(connection, session));
                readings++;
                if (!reading.hidden().isEmpty()) {
                    return Blockers.unknown(sql.hiddenBecause(reading));
                }
                if (!reading.blockers().isEmpty()) {
                    return Blockers.of(session, reading.blockers());
                }
                String unseen = readings == 1 ? unseen(c, session) : null;
                if (unseen != null) {
                    return Blockers.unknown(unseen);
                }
                long pause = TimeUnit.MILLISECONDS.toNanos(sql.rereadMillis());
                if (System.nanoTime() + pause >= deadline || ended.await(pause, TimeUnit.NANOSECONDS)) {
                    return Blockers.unknown(
                            "session " + session + " was not seen waiting for a row lock in "
                                    + readings + " reading(s), the last "
                                    + Duration.ofNanos(deadline - readAt).toMillis()
                                    + " ms before its bound ran out (it was no longer waiting, was between two waits, or"
                                    + " waited for something the database names no holder of, such as a MariaDB metadata lock)");
                }
            }
        } catch (SQLException e) {
            String denied = sql.notPermitted(e);
            return Blockers.unknown(
                    denied != null
                            ? denied
                            : "reading them failed: " + e.getMessage() + " [SQLState " + e.getSQLState() + ", code "
                                    + e.getErrorCode() + "]");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Blockers.unknown("the reading was interrupted");
        } catch (RuntimeException e) {
            return Blockers.unknown("reading them failed: " + e);
        }
    }

    /** Why this role does not see the waiting session at all, or null if it does (or always would). */
    private @Nullable String unseen(Connection c, String session) throws SQLException {
        String count = sql.sessionCountSql();
        if (count == null) {
            return null;
        }
        String because = Jdbc.autocommit(c, connection -> {
            try (PreparedStatement ps = connection.prepareStatement(count)) {
                ps.setQueryTimeout(QUERY_TIMEOUT_SECONDS);
                ps.setLong(1, Long.parseLong(session));
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getLong(1) > 0 ? "" : sql.unseenBecause(session, rs.getString(2));
                }
            }
        });
        return because.isEmpty() ? null : because;
    }

    private BlockerSql.Reading read(Connection c, String session) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.sql())) {
            ps.setQueryTimeout(QUERY_TIMEOUT_SECONDS);
            ps.setLong(1, Long.parseLong(session));
            try (ResultSet rs = ps.executeQuery()) {
                return sql.read(rs);
            }
        }
    }
}
