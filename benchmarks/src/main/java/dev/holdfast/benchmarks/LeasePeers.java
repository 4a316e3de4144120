package dev.holdfast.benchmarks;

import dev.holdfast.testing.TestDatabase;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import javax.sql.DataSource;

/**
 * The peers of the lease benchmarks, set up as their documentation says, on tables named
 * {@code holdfast_bench_lease_*} (this feature's prefix).
 */
final class LeasePeers {

    static final String SHEDLOCK_TABLE = "holdfast_bench_lease_shedlock";
    static final String SI_PREFIX = "HFB_LEASE_";
    static final String SEED_TABLE = "holdfast_bench_lease_seed";
    static final String LIMIT_TABLE = "holdfast_bench_lease_limit";

    private LeasePeers() {}

    static TestDatabase.Kind kind(String database) {
        return TestDatabase.Kind.valueOf(database.toUpperCase(Locale.ROOT));
    }

    static void execute(DataSource ds, String... sql) throws SQLException {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            for (String statement : sql) {
                s.execute(statement);
            }
        }
    }

    /** ShedLock's table, as in its README, for the given database. */
    static JdbcTemplateLockProvider shedLock(DataSource ds, TestDatabase.Kind kind) throws SQLException {
        return shedLock(ds, kind, SHEDLOCK_TABLE);
    }

    /** ShedLock on its own {@code table} (dropped and created as in its README). */
    static JdbcTemplateLockProvider shedLock(DataSource ds, TestDatabase.Kind kind, String table) throws SQLException {
        String time = kind == TestDatabase.Kind.MARIADB ? "TIMESTAMP(3)" : "TIMESTAMP";
        execute(
                ds,
                "DROP TABLE IF EXISTS " + table,
                "CREATE TABLE " + table + " (name VARCHAR(64) NOT NULL, lock_until " + time + " NOT NULL,"
                        + " locked_at " + time + " NOT NULL, locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))");
        return new JdbcTemplateLockProvider(JdbcTemplateLockProvider.Configuration.builder()
                .withJdbcTemplate(new JdbcTemplate(ds))
                .withTableName(table)
                .usingDbTime()
                .build());
    }

    /** Spring Integration's INT_LOCK table (schema-*.sql of spring-integration-jdbc) with this prefix. */
    static void createSpringIntegrationTable(DataSource ds, TestDatabase.Kind kind) throws SQLException {
        String time = kind == TestDatabase.Kind.MARIADB ? "DATETIME(6)" : "TIMESTAMP";
        execute(
                ds,
                "DROP TABLE IF EXISTS " + SI_PREFIX + "LOCK",
                "CREATE TABLE " + SI_PREFIX + "LOCK (LOCK_KEY CHAR(36) NOT NULL, REGION VARCHAR(100) NOT NULL,"
                        + " CLIENT_ID CHAR(36), CREATED_DATE " + time + " NOT NULL, EXPIRED_AFTER " + time
                        + " NOT NULL,"
                        + " constraint " + SI_PREFIX + "LOCK_PK primary key (LOCK_KEY, REGION))");
    }

    /** One Spring Integration registry: a repository (its own client id) on {@code ds}. */
    static JdbcLockRegistry springIntegration(DataSource ds) {
        DefaultLockRepository repository = new DefaultLockRepository(ds);
        repository.setPrefix(SI_PREFIX);
        repository.setTransactionManager(new DataSourceTransactionManager(ds));
        repository.afterPropertiesSet();
        repository.afterSingletonsInstantiated();
        return new JdbcLockRegistry(repository, Duration.ofSeconds(30));
    }

    static void dropSpringIntegrationTable(DataSource ds) throws SQLException {
        execute(ds, "DROP TABLE IF EXISTS " + SI_PREFIX + "LOCK");
    }

    /**
     * The seed's table, with the benchmark's names already present (expired): on MariaDB the seed's
     * {@code SELECT … FOR UPDATE} of a missing row takes a gap lock, and concurrent first inserts
     * deadlock (a known fault of the seed, not what this benchmark measures).
     */
    static void createSeedTable(DataSource ds, int threads, int namesPerThread) throws SQLException {
        execute(
                ds,
                "DROP TABLE IF EXISTS " + SEED_TABLE,
                "CREATE TABLE " + SEED_TABLE + " (name VARCHAR(200) PRIMARY KEY, owner VARCHAR(200) NOT NULL,"
                        + " expires_at TIMESTAMP NOT NULL)");
        try (Connection c = ds.getConnection();
                PreparedStatement ps = c.prepareStatement(
                        "INSERT INTO " + SEED_TABLE + " (name, owner, expires_at) VALUES (?, 'nobody', ?)")) {
            for (int t = 0; t < threads; t++) {
                for (int n = 0; n < namesPerThread; n++) {
                    ps.setString(1, "n" + t + "-" + n);
                    ps.setTimestamp(2, Timestamp.from(Instant.EPOCH.plusSeconds(86_400)));
                    ps.executeUpdate();
                }
            }
        }
    }

    /** A pool whose connections start in manual-commit mode, as a transactional application's. */
    static com.zaxxer.hikari.HikariDataSource manualCommitPool(TestDatabase.Kind kind, int size) {
        com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
        config.setPoolName("bench-lease-seed-" + kind.id());
        config.setJdbcUrl(kind.url());
        config.setUsername(kind.user());
        config.setPassword(kind.password());
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(0);
        config.setAutoCommit(false);
        return new com.zaxxer.hikari.HikariDataSource(config);
    }

    /**
     * The seed's dist_lock algorithm: in one transaction, select the row for update, then insert it or
     * (if expired or already the caller's) update it, then commit. Application time, as the seed.
     */
    static boolean seedTryLock(Connection c, String name, String owner, Duration ttl) throws SQLException {
        Instant now = Instant.now();
        boolean granted;
        try (PreparedStatement select =
                c.prepareStatement("SELECT owner, expires_at FROM " + SEED_TABLE + " WHERE name = ? FOR UPDATE")) {
            select.setString(1, name);
            try (ResultSet rs = select.executeQuery()) {
                if (!rs.next()) {
                    try (PreparedStatement insert = c.prepareStatement(
                            "INSERT INTO " + SEED_TABLE + " (name, owner, expires_at) VALUES (?, ?, ?)")) {
                        insert.setString(1, name);
                        insert.setString(2, owner);
                        insert.setTimestamp(3, Timestamp.from(now.plus(ttl)));
                        insert.executeUpdate();
                    }
                    granted = true;
                } else if (rs.getString(1).equals(owner)
                        || rs.getTimestamp(2).toInstant().isBefore(now)) {
                    try (PreparedStatement update = c.prepareStatement(
                            "UPDATE " + SEED_TABLE + " SET owner = ?, expires_at = ? WHERE name = ?")) {
                        update.setString(1, owner);
                        update.setTimestamp(2, Timestamp.from(now.plus(ttl)));
                        update.setString(3, name);
                        update.executeUpdate();
                    }
                    granted = true;
                } else {
                    granted = false;
                }
            }
        }
        c.commit();
        return granted;
    }

    /** The seed's unlock: one statement in its own transaction. */
    static boolean seedUnlock(Connection c, String name, String owner) throws SQLException {
        int rows;
        try (PreparedStatement ps =
                c.prepareStatement("UPDATE " + SEED_TABLE + " SET expires_at = ? WHERE name = ? AND owner = ?")) {
            ps.setTimestamp(1, Timestamp.from(Instant.EPOCH.plusSeconds(86_400)));
            ps.setString(2, name);
            ps.setString(3, owner);
            rows = ps.executeUpdate();
        }
        c.commit();
        return rows == 1;
    }

    static void createLimitTable(DataSource ds, int rows) throws SQLException {
        createLimitTable(ds, rows, LIMIT_TABLE);
    }

    /** The limit's {@code table} of {@code rows} counters (dropped and created). */
    static void createLimitTable(DataSource ds, int rows, String table) throws SQLException {
        execute(
                ds,
                "DROP TABLE IF EXISTS " + table,
                "CREATE TABLE " + table + " (id INT PRIMARY KEY, v BIGINT NOT NULL)");
        try (Connection c = ds.getConnection();
                PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " (id, v) VALUES (?, 0)")) {
            for (int i = 0; i < rows; i++) {
                ps.setInt(1, i);
                ps.executeUpdate();
            }
        }
    }
}
