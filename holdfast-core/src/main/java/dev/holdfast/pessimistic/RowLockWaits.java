package dev.holdfast.pessimistic;

import dev.holdfast.DatabaseException;
import dev.holdfast.internal.Arguments;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.jdbc.internal.Jdbc;
import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * The lock waits of the database right now, each with the sessions it waits for: an operator's
 * view (the starter's Actuator endpoint shows it). It reads the same views as a
 * {@link LockTimeoutException}'s blockers ({@link Blocker}), from a connection of its own in
 * auto-commit mode: first the waiting sessions (PostgreSQL {@code pg_locks} where not granted, with
 * {@code pg_stat_activity}; MariaDB {@code INFORMATION_SCHEMA.INNODB_TRX} in {@code LOCK WAIT} with
 * {@code PROCESSLIST}; H2 {@code INFORMATION_SCHEMA.SESSIONS} with a {@code BLOCKER_ID}), longest
 * waiting first, then the blockers of each: one statement plus one per wait listed.
 *
 * <p>On PostgreSQL this lists waits for any lock (a row, a table, an advisory lock), not only row
 * locks. A role sees what it may see of other sessions: PostgreSQL needs {@code pg_read_all_stats}
 * (else their statements and blockers are hidden, and the blockers say so), MariaDB the
 * {@code PROCESS} privilege (else the call fails with {@link DatabaseException}), H2 an admin (else
 * the list is empty). Thread-safe.
 *
 * <p>MariaDB serves its two views from a cache that it refreshes only when nobody has read it for
 * 0.1 s: a reading may be that old, and whoever reads more often than that (any client of the
 * server) keeps it frozen. Do not poll this more than a few times a second.
 */
public final class RowLockWaits {

    /** The most waits one {@link #list(int)} returns. */
    public static final int MAX_LIMIT = 100;

    private final BlockerSql sql;
    private final DataSource dataSource;

    private RowLockWaits(Dialect dialect, DataSource dataSource) {
        this.sql = BlockerSql.forDialect(Arguments.notNull(dialect, "dialect"));
        this.dataSource = Arguments.notNull(dataSource, "dataSource");
    }

    /**
     * The waits of the database behind {@code dataSource}, which lends the reading connection.
     *
     * @param dialect    the database's dialect; not null
     * @param dataSource the pool that lends a connection for each {@link #list(int)}; not null
     * @return a reader of the waits; it borrows no connection until {@link #list(int)}
     * @throws IllegalArgumentException if an argument is null
     */
    public static RowLockWaits of(Dialect dialect, DataSource dataSource) {
        return new RowLockWaits(dialect, dataSource);
    }

    /**
     * The sessions waiting for a lock now, longest waiting first, at most {@code limit}. A session
     * that stopped waiting between the two readings is left out.
     *
     * @param limit 1 to {@value #MAX_LIMIT}
     * @return the waiting sessions, each with its blockers; empty if no session waits (always empty
     *         on H2 for a role that is not an admin)
     * @throws IllegalArgumentException if {@code limit} is out of range
     * @throws DatabaseException        if the reading failed (on MariaDB: also without {@code PROCESS})
     */
    public List<RowLockWait> list(int limit) {
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new IllegalArgumentException("limit must be 1 to " + MAX_LIMIT + ", not " + limit);
        }
        return Jdbc.autocommit(dataSource, "listing the lock waits", c -> read(c, limit));
    }

    /** A waiting session as the first reading saw it. */
    private record Waiting(
            String session,
            @Nullable String user,
            @Nullable String application,
            @Nullable String client,
            @Nullable Instant since,
            @Nullable String state,
            @Nullable String statement) {}

    private List<RowLockWait> read(Connection c, int limit) throws SQLException {
        List<Waiting> waits = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql.waitingSql())) {
            ps.setQueryTimeout(BlockerProbe.QUERY_TIMEOUT_SECONDS);
            ps.setInt(1, limit);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    waits.add(new Waiting(
                            rs.getString("session_id"),
                            rs.getString("user_name"),
                            rs.getString("application"),
                            rs.getString("client"),
                            sql.waitingSince(rs),
                            rs.getString("state"),
                            sql.statement(rs)));
                }
            }
        }
        List<RowLockWait> known = new ArrayList<>(waits.size());
        for (Waiting w : waits) {
            Blockers blockers = blockers(c, w.session());
            if (blockers != null) {
                known.add(new RowLockWait(
                        w.session(),
                        w.user(),
                        w.application(),
                        w.client(),
                        w.since(),
                        w.state(),
                        w.statement(),
                        blockers));
            }
        }
        return known;
    }

    /** The blockers of one waiting session; null if it no longer waits. */
    private @Nullable Blockers blockers(Connection c, String session) throws SQLException {
        BlockerSql.Reading reading;
        try (PreparedStatement ps = c.prepareStatement(sql.sql())) {
            ps.setQueryTimeout(BlockerProbe.QUERY_TIMEOUT_SECONDS);
            ps.setLong(1, Long.parseLong(session));
            try (ResultSet rs = ps.executeQuery()) {
                reading = sql.read(rs);
            }
        }
        if (!reading.hidden().isEmpty()) {
            return Blockers.unknown(sql.hiddenBecause(reading));
        }
        return reading.blockers().isEmpty() ? null : Blockers.of(session, reading.blockers());
    }
}
