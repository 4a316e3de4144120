package dev.holdfast.pessimistic;

import dev.holdfast.jdbc.dialect.Dialect;
import org.jspecify.annotations.Nullable;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The query that names the sessions a waiting session waits for, per dialect: text and reading
 * only ({@link BlockerProbe} runs it). It follows the chain of waits {@value Blockers#MAX_DEPTH}
 * links deep with a recursive query, in one statement whose one parameter is the waiting
 * session's id. Every column is read from the database's own views:
 *
 * <ul>
 *   <li>PostgreSQL: {@code pg_blocking_pids()} (any role may call it) joined with
 *       {@code pg_stat_activity}, which shows another role's sessions only to members of
 *       {@code pg_read_all_stats};</li>
 *   <li>MariaDB: {@code INFORMATION_SCHEMA.INNODB_LOCK_WAITS} and {@code INNODB_TRX} (both need
 *       the {@code PROCESS} privilege) joined with {@code PROCESSLIST}. InnoDB serves these from a
 *       cache refreshed only when nobody read it for 0.1 s, so a reading may be that old;</li>
 *   <li>H2: {@code INFORMATION_SCHEMA.SESSIONS.BLOCKER_ID} (one blocker per session; other
 *       sessions are shown to admins only).</li>
 * </ul>
 */
abstract class BlockerSql {

    /** Most rows read: enough to count what {@link Blockers#MAX_SESSIONS} leaves out. */
    static final int MAX_ROWS = 1000;

    /** What one reading saw: blockers nearest first (empty: the session was not waiting), and those hidden from this role. */
    record Reading(
            List<Blocker> blockers,
            List<String> hidden,
            @Nullable String role) {}

    private final Dialect dialect;

    BlockerSql(Dialect dialect) {
        this.dialect = dialect;
    }

    static BlockerSql forDialect(Dialect dialect) {
        return switch (dialect) {
            case H2 -> new H2();
            case POSTGRESQL -> new PostgreSql();
            case MARIADB -> new MariaDb();
        };
    }

    /** The query; its one parameter is the waiting session's id (a number). */
    abstract String sql();

    /**
     * Counts the sessions this role sees with the id bound as its parameter (and names the role), or
     * null where the waiting session is always seen: read when a session was not seen waiting, to tell
     * why ({@link #unseenBecause}).
     */
    @Nullable
    String sessionCountSql() {
        return null;
    }

    /** Why the waiting {@code session} is not among the sessions {@code role} sees. */
    String unseenBecause(String session, @Nullable String role) {
        return "session " + session + " is not among the sessions " + role + " may see";
    }

    /** How long to wait before reading again when the session was not seen waiting. */
    long rereadMillis() {
        return 20;
    }

    /**
     * Why this failure means the role may not look, with what to grant; null for any other
     * failure.
     */
    @Nullable
    String notPermitted(SQLException e) {
        return "42501".equals(e.getSQLState()) ? "the role may not read the lock views" : null;
    }

    /** Why blockers the reading found are hidden from this role, with what to grant. */
    abstract String hiddenBecause(Reading reading);

    Reading read(ResultSet rs) throws SQLException {
        Map<String, Blocker> blockers = new LinkedHashMap<>();
        List<String> hidden = new ArrayList<>();
        String role = null;
        while (rs.next()) {
            String id = rs.getString("session_id");
            role = role != null ? role : rs.getString("role");
            if (rs.getBoolean("hidden")) {
                if (!hidden.contains(id)) {
                    hidden.add(id);
                }
                continue;
            }
            blockers.putIfAbsent(
                    id,
                    new Blocker(
                            id,
                            rs.getString("blocks"),
                            rs.getString("user_name"),
                            rs.getString("application"),
                            rs.getString("client"),
                            transactionStart(rs),
                            rs.getString("state"),
                            statement(rs)));
        }
        return new Reading(List.copyOf(blockers.values()), List.copyOf(hidden), role);
    }

    abstract @Nullable Instant transactionStart(ResultSet rs) throws SQLException;

    /**
     * The sessions waiting for a lock now, longest waiting first, each with what the database shows
     * of it (columns session_id, user_name, application, client, waiting_since, state, statement);
     * its one parameter is the most rows to return. {@link RowLockWaits} then reads each one's
     * blockers with {@link #sql()}.
     */
    abstract String waitingSql();

    /** When the session began to wait, from {@link #waitingSql()}'s {@code waiting_since}. */
    abstract @Nullable Instant waitingSince(ResultSet rs) throws SQLException;

    /**
     * The statement of a row of {@link #sql()} or {@link #waitingSql()} as shown: literals replaced,
     * cut (see {@link StatementText}); its column {@code statement_whole} says whether the database
     * showed all of it.
     */
    @Nullable
    String statement(ResultSet rs) throws SQLException {
        return StatementText.shown(dialect, rs.getString("statement"), rs.getBoolean("statement_whole"));
    }

    /** PostgreSQL: every blocker of a waiting backend is one {@code pg_blocking_pids()} call away. */
    static final class PostgreSql extends BlockerSql {
        /**
         * Whether {@code a.query} is all of the statement: PostgreSQL keeps at most
         * {@code track_activity_query_size - 1} bytes of it, cut at a character (up to 4 bytes).
         */
        private static final String WHOLE = "(length(a.query) <= 4096 AND octet_length(a.query) < (SELECT"
                + " setting::int FROM pg_settings WHERE name = 'track_activity_query_size') - 4)";

        PostgreSql() {
            super(Dialect.POSTGRESQL);
        }

        /** Every role sees every backend in pg_stat_activity (if not what it runs). */
        @Override
        String sessionCountSql() {
            return "SELECT count(*), current_user FROM pg_stat_activity WHERE pid = CAST(? AS integer)";
        }

        /** Through a pooler (PgBouncer) pgjdbc learns a process id of the pooler's own. */
        @Override
        String unseenBecause(String session, @Nullable String role) {
            return "session " + session + " is no session of the database server: a connection pooler between"
                    + " (PgBouncer) reports process ids of its own, so the server cannot say who blocks; connect"
                    + " directly, without the pooler, to have the blockers named";
        }

        @Override
        String sql() {
            return "WITH RECURSIVE chain(pid, blocks, depth) AS ("
                    + " SELECT b, w.pid, 1 FROM (SELECT CAST(? AS integer) AS pid) w"
                    + " CROSS JOIN LATERAL unnest(pg_blocking_pids(w.pid)) AS b"
                    + " UNION"
                    + " SELECT b, c.pid, c.depth + 1 FROM chain c"
                    + " CROSS JOIN LATERAL unnest(pg_blocking_pids(c.pid)) AS b WHERE c.depth < " + Blockers.MAX_DEPTH
                    + ")"
                    + " SELECT c.pid::text AS session_id, c.blocks::text AS blocks, current_user AS role,"
                    + " a.usename AS user_name, a.application_name AS application, host(a.client_addr) AS client,"
                    + " a.xact_start AS transaction_start,"
                    + " a.state || coalesce(', waiting for ' || a.wait_event_type || '/' || a.wait_event, '') AS state,"
                    + " left(a.query, 4096) AS statement, " + WHOLE + " AS statement_whole,"
                    + " coalesce(a.query = '<insufficient privilege>', false) AS hidden"
                    + " FROM chain c LEFT JOIN pg_stat_activity a ON a.pid = c.pid"
                    + " ORDER BY c.depth, c.pid LIMIT " + MAX_ROWS;
        }

        @Override
        @Nullable
        Instant transactionStart(ResultSet rs) throws SQLException {
            return Dialect.POSTGRESQL.readInstant(rs, rs.findColumn("transaction_start"));
        }

        /** pg_locks shows every waiting backend to every role; pg_stat_activity hides the rest. */
        @Override
        String waitingSql() {
            return "SELECT w.pid::text AS session_id, a.usename AS user_name, a.application_name AS application,"
                    + " host(a.client_addr) AS client, coalesce(w.since, a.query_start) AS waiting_since,"
                    + " a.state || coalesce(', waiting for ' || a.wait_event_type || '/' || a.wait_event, '') AS state,"
                    + " CASE WHEN a.query = '<insufficient privilege>' THEN NULL ELSE left(a.query, 4096) END AS statement,"
                    + " " + WHOLE + " AS statement_whole"
                    + " FROM (SELECT pid, min(waitstart) AS since FROM pg_locks WHERE NOT granted AND pid IS NOT NULL"
                    + " AND pid <> pg_backend_pid() GROUP BY pid) w LEFT JOIN pg_stat_activity a ON a.pid = w.pid"
                    + " ORDER BY waiting_since NULLS LAST, w.pid LIMIT ?";
        }

        @Override
        @Nullable
        Instant waitingSince(ResultSet rs) throws SQLException {
            return Dialect.POSTGRESQL.readInstant(rs, rs.findColumn("waiting_since"));
        }

        @Override
        String hiddenBecause(Reading reading) {
            return "role " + reading.role() + " may not see the sessions that block it (pg_stat_activity hides pid "
                    + String.join(", ", reading.hidden()) + "); grant it pg_read_all_stats (or pg_monitor)";
        }
    }

    /** MariaDB: InnoDB's lock waits, each waiting transaction with the transactions it waits for. */
    static final class MariaDb extends BlockerSql {
        /**
         * Whether the statement is all there: {@code PROCESSLIST.INFO} keeps 65,535 characters,
         * {@code INNODB_TRX.trx_query} (read when INFO is null) 1,024.
         */
        private static final String WHOLE = "(p.INFO IS NOT NULL AND CHAR_LENGTH(p.INFO) < 4096)";

        /** ER_SPECIFIC_ACCESS_DENIED_ERROR: INNODB_TRX and INNODB_LOCK_WAITS need PROCESS. */
        private static final int ACCESS_DENIED = 1227;

        MariaDb() {
            super(Dialect.MARIADB);
        }

        @Override
        String sql() {
            return "WITH RECURSIVE chain (trx, blocks, depth) AS ("
                    + " SELECT w.blocking_trx_id, r.trx_mysql_thread_id, 1"
                    + " FROM information_schema.INNODB_TRX r"
                    + " JOIN information_schema.INNODB_LOCK_WAITS w ON w.requesting_trx_id = r.trx_id"
                    + " WHERE r.trx_mysql_thread_id = ?"
                    + " UNION"
                    + " SELECT w.blocking_trx_id, t.trx_mysql_thread_id, c.depth + 1 FROM chain c"
                    + " JOIN information_schema.INNODB_TRX t ON t.trx_id = c.trx AND t.trx_lock_structs > 0"
                    + " JOIN information_schema.INNODB_LOCK_WAITS w ON w.requesting_trx_id = t.trx_id"
                    + " WHERE c.depth < " + Blockers.MAX_DEPTH
                    + ")"
                    + " SELECT CAST(b.trx_mysql_thread_id AS CHAR) AS session_id, CAST(c.blocks AS CHAR) AS blocks,"
                    + " CURRENT_USER() AS role, p.USER AS user_name, CAST(NULL AS CHAR) AS application, p.HOST AS client,"
                    + " UNIX_TIMESTAMP(b.trx_started) AS transaction_start,"
                    + " CONCAT_WS(', ', b.trx_state, p.COMMAND) AS state,"
                    + " LEFT(COALESCE(p.INFO, b.trx_query), 4096) AS statement, " + WHOLE + " AS statement_whole,"
                    + " FALSE AS hidden"
                    // A transaction that only reads or share-locks has trx_id 0, and so has every such transaction
                    // of the server: a blocker holds a lock, a plain read elsewhere holds none.
                    + " FROM chain c JOIN information_schema.INNODB_TRX b ON b.trx_id = c.trx AND b.trx_lock_structs > 0"
                    + " LEFT JOIN information_schema.PROCESSLIST p ON p.ID = b.trx_mysql_thread_id"
                    + " ORDER BY c.depth, b.trx_mysql_thread_id LIMIT " + MAX_ROWS;
        }

        @Override
        long rereadMillis() {
            return 110; // InnoDB's cache of its lock views stays as it was while read within 0.1 s
        }

        @Override
        @Nullable
        String notPermitted(SQLException e) {
            return e.getErrorCode() == ACCESS_DENIED
                    ? "the user may not read INFORMATION_SCHEMA.INNODB_TRX and INNODB_LOCK_WAITS; grant it the PROCESS"
                            + " privilege (MariaDB said: " + e.getMessage() + ")"
                    : super.notPermitted(e);
        }

        @Override
        @Nullable
        Instant transactionStart(ResultSet rs) throws SQLException {
            long seconds = rs.getLong("transaction_start");
            return rs.wasNull() ? null : Instant.ofEpochSecond(seconds);
        }

        @Override
        String waitingSql() {
            return "SELECT CAST(r.trx_mysql_thread_id AS CHAR) AS session_id, p.USER AS user_name,"
                    + " CAST(NULL AS CHAR) AS application, p.HOST AS client,"
                    + " UNIX_TIMESTAMP(r.trx_wait_started) AS waiting_since, CONCAT_WS(', ', r.trx_state, p.COMMAND) AS state,"
                    + " LEFT(COALESCE(p.INFO, r.trx_query), 4096) AS statement, " + WHOLE + " AS statement_whole"
                    + " FROM information_schema.INNODB_TRX r"
                    + " LEFT JOIN information_schema.PROCESSLIST p ON p.ID = r.trx_mysql_thread_id"
                    + " WHERE r.trx_state = 'LOCK WAIT' ORDER BY r.trx_wait_started, r.trx_mysql_thread_id LIMIT ?";
        }

        @Override
        @Nullable
        Instant waitingSince(ResultSet rs) throws SQLException {
            long seconds = rs.getLong("waiting_since");
            return rs.wasNull() ? null : Instant.ofEpochSecond(seconds);
        }

        @Override
        String hiddenBecause(Reading reading) {
            return "user " + reading.role() + " may not see threads " + String.join(", ", reading.hidden());
        }
    }

    /** H2: each waiting session names the one session it waits for. */
    static final class H2 extends BlockerSql {
        H2() {
            super(Dialect.H2);
        }

        @Override
        String sql() {
            return "WITH RECURSIVE chain(id, blocks, depth) AS ("
                    + " SELECT BLOCKER_ID, SESSION_ID, 1 FROM INFORMATION_SCHEMA.SESSIONS"
                    + " WHERE SESSION_ID = CAST(? AS INTEGER) AND BLOCKER_ID IS NOT NULL"
                    + " UNION ALL"
                    + " SELECT s.BLOCKER_ID, s.SESSION_ID, c.depth + 1 FROM chain c"
                    + " JOIN INFORMATION_SCHEMA.SESSIONS s ON s.SESSION_ID = c.id"
                    + " WHERE s.BLOCKER_ID IS NOT NULL AND c.depth < " + Blockers.MAX_DEPTH
                    + ")"
                    + " SELECT CAST(c.id AS VARCHAR) AS session_id, CAST(c.blocks AS VARCHAR) AS blocks,"
                    + " CURRENT_USER AS role, s.USER_NAME AS user_name, s.CLIENT_INFO AS application,"
                    + " s.CLIENT_ADDR AS client, s.SESSION_STATE AS state, s.EXECUTING_STATEMENT AS statement,"
                    + " TRUE AS statement_whole, s.SESSION_ID IS NULL AS hidden"
                    + " FROM chain c LEFT JOIN INFORMATION_SCHEMA.SESSIONS s ON s.SESSION_ID = c.id"
                    + " ORDER BY c.depth, c.id LIMIT " + MAX_ROWS;
        }

        @Override
        @Nullable
        Instant transactionStart(ResultSet rs) {
            return null; // H2 does not keep when a session's transaction began
        }

        /** A user who is no admin sees no session but its own, the waiting one neither. */
        @Override
        String sessionCountSql() {
            return "SELECT COUNT(*), CURRENT_USER FROM INFORMATION_SCHEMA.SESSIONS WHERE SESSION_ID = CAST(? AS INTEGER)";
        }

        @Override
        String unseenBecause(String session, @Nullable String role) {
            return hiddenBecause(new Reading(List.of(), List.of(session), role));
        }

        @Override
        String waitingSql() {
            return "SELECT CAST(SESSION_ID AS VARCHAR) AS session_id, USER_NAME AS user_name, CLIENT_INFO AS application,"
                    + " CLIENT_ADDR AS client, EXECUTING_STATEMENT_START AS waiting_since, SESSION_STATE AS state,"
                    + " EXECUTING_STATEMENT AS statement, TRUE AS statement_whole FROM INFORMATION_SCHEMA.SESSIONS"
                    + " WHERE BLOCKER_ID IS NOT NULL ORDER BY EXECUTING_STATEMENT_START, SESSION_ID LIMIT ?";
        }

        @Override
        @Nullable
        Instant waitingSince(ResultSet rs) throws SQLException {
            return Dialect.H2.readInstant(rs, rs.findColumn("waiting_since"));
        }

        @Override
        String hiddenBecause(Reading reading) {
            return "user " + reading.role() + " may not see sessions " + String.join(", ", reading.hidden())
                    + " (H2 shows other sessions to admins only)";
        }
    }
}
