package dev.holdfast.pessimistic.offline;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On PostgreSQL the statements that must be durable (tryLock and release in DURABLE mode,
 * extensions in every mode) force {@code synchronous_commit} to at least {@code on} for their own
 * transaction, keep a stronger setting, and leave the session's setting as it was.
 */
class OfflineLockDurabilityTest {

    private static final Map<String, String> EXPECTED = Map.of(
            "off", "on", "local", "on", "on", "on", "remote_write", "remote_write", "remote_apply", "remote_apply");

    private interface Step {
        void run(Connection c, String lockId) throws SQLException;
    }

    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void durableStatementsCommitDurablyAndLeaveTheSessionAsItWas(TestDatabase db) throws Exception {
        OfflineLockFixture f = OfflineLockFixture.create(db);
        OfflineLockSql sql = OfflineLockSql.forDialect(Dialect.POSTGRESQL, f.table);
        Map<String, Step> steps = new LinkedHashMap<>();
        steps.put(
                "tryLock (durable)",
                (c, id) -> assertThat(update(c, sql.tryLock(false), "order", id, id, "alice", 60_000_000L))
                        .isEqualTo(1));
        steps.put(
                "extend",
                (c, id) -> assertThat(update(c, sql.extend(false), 1_000_000L, 60_000_000L, id))
                        .isEqualTo(1));
        steps.put(
                "extend (owned)",
                (c, id) -> assertThat(update(c, sql.extend(true), 1_000_000L, 60_000_000L, id, "alice"))
                        .isEqualTo(1));
        steps.put(
                "release (durable)",
                (c, id) -> assertThat(update(c, sql.release(false, false), id)).isEqualTo(1));
        steps.put(
                "tryLock again (durable)",
                (c, id) -> assertThat(update(c, sql.tryLock(false), "order", id, id + "-2", "alice", 60_000_000L))
                        .isEqualTo(1));
        steps.put(
                "release (owned, durable)",
                (c, id) -> assertThat(update(c, sql.release(true, false), id + "-2", "alice"))
                        .isEqualTo(1));
        try (HikariDataSource pool = db.newPool(1)) {
            int i = 0;
            for (var session : EXPECTED.entrySet()) {
                String lockId = "lock-" + i++;
                for (var step : steps.entrySet()) {
                    try (Connection c = pool.getConnection()) {
                        set(c, session.getKey());
                        c.setAutoCommit(false);
                        step.getValue().run(c, lockId);
                        assertThat(setting(c))
                                .as(step.getKey() + " in a session with " + session.getKey())
                                .isEqualTo(session.getValue());
                        c.commit();
                        c.setAutoCommit(true);
                        assertThat(setting(c))
                                .as("the session after " + step.getKey())
                                .isEqualTo(session.getKey());
                        set(c, "on");
                    }
                }
            }
        }
    }

    /** Runs one statement and counts the rows it affected (or returned). */
    private static int update(Connection c, String sql, Object... parameters) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                ps.setObject(i + 1, parameters[i]);
            }
            if (ps.execute()) {
                int rows = 0;
                try (ResultSet rs = ps.getResultSet()) {
                    while (rs.next()) {
                        rows++;
                    }
                }
                return rows;
            }
            return ps.getUpdateCount();
        }
    }

    private static void set(Connection c, String value) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("SET synchronous_commit = " + value);
        }
    }

    private static String setting(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT current_setting('synchronous_commit')");
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getString(1);
        }
    }
}
