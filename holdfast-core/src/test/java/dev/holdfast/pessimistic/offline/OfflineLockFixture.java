package dev.holdfast.pessimistic.offline;

import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import javax.sql.DataSource;

import static org.awaitility.Awaitility.await;

/** A fresh locks table per test, and ways to look at it directly. */
final class OfflineLockFixture {

    final TestDatabase db;
    final String table;
    final Dialect dialect;

    private OfflineLockFixture(TestDatabase db, String table) {
        this.db = db;
        this.table = table;
        this.dialect = Dialect.detect(db.dataSource());
    }

    static OfflineLockFixture create(TestDatabase db) {
        String table = db.newTableName("offlock");
        new SchemaInstaller(db.dataSource()).install(HoldfastTable.OFFLINE_LOCKS, table);
        return new OfflineLockFixture(db, table);
    }

    JdbcLockManager manager() {
        return manager(b -> b);
    }

    JdbcLockManager manager(UnaryOperator<JdbcLockManager.Builder> config) {
        return manager(db.dataSource(), config);
    }

    JdbcLockManager manager(DataSource ds, UnaryOperator<JdbcLockManager.Builder> config) {
        return config.apply(JdbcLockManager.builder(ds).table(table)).build();
    }

    /** Every row, every column, as text: to prove that a refused call changed nothing. */
    List<String> snapshot() throws SQLException {
        List<String> rows = new ArrayList<>();
        try (Connection c = db.connection();
                PreparedStatement ps = c.prepareStatement(
                        "SELECT lock_type, resource_id, lock_id, lock_owner, acquired_at, expires_at FROM " + table
                                + " ORDER BY lock_type, resource_id");
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                rows.add(rs.getString(1) + "|" + rs.getString(2) + "|" + rs.getString(3) + "|" + rs.getString(4) + "|"
                        + dialect.readInstant(rs, 5) + "|" + dialect.readInstant(rs, 6));
            }
        }
        return rows;
    }

    long count(String where) throws SQLException {
        return db.queryLong("SELECT COUNT(*) FROM " + table + (where.isEmpty() ? "" : " WHERE " + where));
    }

    Instant expiresAt(String type, String id) throws SQLException {
        try (Connection c = db.connection();
                PreparedStatement ps = c.prepareStatement(
                        "SELECT expires_at FROM " + table + " WHERE lock_type = ? AND resource_id = ?")) {
            ps.setString(1, type);
            ps.setString(2, id);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? dialect.readInstant(rs, 1) : null;
            }
        }
    }

    Instant dbNow() throws SQLException {
        try (Connection c = db.connection()) {
            return dialect.now(c);
        }
    }

    /** Waits until the database clock, not this JVM's, has passed {@code instant}. */
    void awaitDbTimePast(Instant instant) throws Exception {
        await("the database clock passing " + instant)
                .atMost(Duration.ofSeconds(30))
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(20))
                .until(() -> dbNow().isAfter(instant));
    }

    /** Adds {@code n} rows that expired an hour ago, of type {@code type}, ids {@code prefix0…}, in one statement. */
    private static final String COLUMNS = " (lock_type, resource_id, lock_id, lock_owner, acquired_at, expires_at)";

    void addExpiredRows(String type, String prefix, int n) throws SQLException {
        String sql = switch (dialect) {
            case POSTGRESQL ->
                "INSERT INTO " + table + COLUMNS + " SELECT ?, ? || g, md5(random()::text || g), 'filler',"
                        + " now() - interval '2 hours', now() - interval '1 hour' FROM generate_series(0, ? - 1) g";
            case MARIADB ->
                "INSERT INTO " + table + COLUMNS + " SELECT ?, CONCAT(?, seq), MD5(CONCAT(RAND(), seq)), 'filler',"
                        + " UTC_TIMESTAMP(6) - INTERVAL 2 HOUR, UTC_TIMESTAMP(6) - INTERVAL 1 HOUR FROM seq_0_to_"
                        + (n - 1) + " WHERE ? > 0";
            case H2 ->
                "INSERT INTO " + table + COLUMNS
                        + " SELECT ?, CONCAT(?, X - 1), REPLACE(CAST(RANDOM_UUID() AS VARCHAR), '-', ''), 'filler',"
                        + " DATEADD(HOUR, -2, CURRENT_TIMESTAMP), DATEADD(HOUR, -1, CURRENT_TIMESTAMP) FROM SYSTEM_RANGE(1, ?)";
        };
        db.execute(sql, type, prefix, n);
    }
}
