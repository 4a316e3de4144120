package dev.holdfast.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.jdbc.CommitDurability;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.testing.TestDatabase;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * One {@code tryLock} + {@code releaseLock} pair per operation, on resources cycling through a
 * working set of 1,000 ids per thread, in the same table:
 * <ul>
 *   <li>{@code holdfastTryLockReleaseRelaxed}: {@link JdbcLockManager}, one upsert and one update,
 *       each its own autocommit transaction, not waiting for a durable commit (PostgreSQL;
 *       see {@link CommitDurability#RELAXED});</li>
 *   <li>{@code holdfastTryLockReleaseDurable}: the same statements, durable commits;</li>
 *   <li>{@code seedTryLockRelease}: the seed algorithm of the DDD chapter — in a new transaction
 *       SELECT the lock row, DELETE it if expired, INSERT, commit; release = DELETE in a
 *       transaction (database time for the expiry check, to be fair to it).</li>
 * </ul>
 * {@code fillerRows} adds that many other rows first (half held, half expired) to show the cost of
 * a large table. SampleTime mode: the mean gives pairs/s per thread, the percentiles the p99.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(1)
public class OfflineLockBenchmark {

    private static final int WORKING_SET = 1_000;

    @Param({"h2", "postgresql", "mariadb"})
    public String database;

    @Param({"0", "1000000"})
    public int fillerRows;

    private HikariDataSource pool;
    private Dialect dialect;
    private String table;
    private JdbcLockManager relaxed;
    private JdbcLockManager durable;
    private SeedLockManager seed;

    /** Each thread cycles through its own ids, so that threads never contend for one resource. */
    @State(Scope.Thread)
    public static class Ids {
        private final String prefix = Long.toString(ThreadLocalRandom.current().nextLong() >>> 16, 36) + "-";
        private int next;

        String next() {
            next = (next + 1) % WORKING_SET;
            return prefix + next;
        }
    }

    @Setup(Level.Trial)
    public void setUp() throws SQLException {
        TestDatabase.Kind kind = TestDatabase.Kind.valueOf(database.toUpperCase(Locale.ROOT));
        pool = kind.newPool("bench-offline-" + database, 8);
        dialect = Dialect.detect(pool);
        table = fillerRows == 0 ? "holdfast_bench_offline_empty" : "holdfast_bench_offline_" + fillerRows;
        new SchemaInstaller(pool).install(HoldfastTable.OFFLINE_LOCKS, table);
        try (Connection c = pool.getConnection();
                Statement s = c.createStatement()) {
            s.executeUpdate("DELETE FROM " + table + " WHERE lock_type <> 'filler'");
            long present;
            try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM " + table)) {
                rs.next();
                present = rs.getLong(1);
            }
            if (present != fillerRows) {
                s.executeUpdate("DELETE FROM " + table);
                fill(c, fillerRows);
            }
            if (dialect == Dialect.POSTGRESQL) {
                s.execute("VACUUM ANALYZE " + table);
            } else if (dialect == Dialect.MARIADB) {
                s.execute("ANALYZE TABLE " + table);
            }
        }
        relaxed = JdbcLockManager.builder(pool)
                .table(table)
                .durability(CommitDurability.RELAXED)
                .build();
        durable = JdbcLockManager.builder(pool)
                .table(table)
                .durability(CommitDurability.DURABLE)
                .build();
        seed = new SeedLockManager(pool, dialect, table);
    }

    /** Bulk fill in one statement: half the rows held for a day, half expired an hour ago. */
    private void fill(Connection c, int rows) throws SQLException {
        if (rows == 0) {
            return;
        }
        String sql = switch (dialect) {
            case POSTGRESQL ->
                "INSERT INTO " + table
                        + " SELECT 'filler', 'f' || g, md5(g::text), 'filler', now() - interval '2 hours',"
                        + " CASE WHEN g % 2 = 0 THEN now() + interval '1 day' ELSE now() - interval '1 hour' END"
                        + " FROM generate_series(1, " + rows + ") g";
            case MARIADB ->
                "INSERT INTO " + table
                        + " SELECT 'filler', CONCAT('f', seq), MD5(seq), 'filler', UTC_TIMESTAMP(6) - INTERVAL 2 HOUR,"
                        + " IF(seq % 2 = 0, UTC_TIMESTAMP(6) + INTERVAL 1 DAY, UTC_TIMESTAMP(6) - INTERVAL 1 HOUR)"
                        + " FROM seq_1_to_" + rows;
            case H2 ->
                "INSERT INTO " + table
                        + " SELECT 'filler', CONCAT('f', X), CONCAT('h', X), 'filler', DATEADD(HOUR, -2, CURRENT_TIMESTAMP),"
                        + " CASE WHEN MOD(X, 2) = 0 THEN DATEADD(DAY, 1, CURRENT_TIMESTAMP) ELSE DATEADD(HOUR, -1, CURRENT_TIMESTAMP) END"
                        + " FROM SYSTEM_RANGE(1, " + rows + ")";
        };
        try (Statement s = c.createStatement()) {
            s.executeUpdate(sql);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws SQLException {
        try (Connection c = pool.getConnection();
                Statement s = c.createStatement()) {
            if (fillerRows == 0) {
                s.execute("DROP TABLE IF EXISTS " + table);
            } else {
                // The filled table is kept for the next trial (refilling takes longer than the trial).
                s.executeUpdate("DELETE FROM " + table + " WHERE lock_type <> 'filler'");
            }
        }
        pool.close();
    }

    @Benchmark
    public LockId holdfastTryLockReleaseRelaxed(Ids ids) {
        LockId lockId = relaxed.tryLock("bench_holdfast", ids.next(), "bench");
        relaxed.releaseLock(lockId);
        return lockId;
    }

    @Benchmark
    public LockId holdfastTryLockReleaseDurable(Ids ids) {
        LockId lockId = durable.tryLock("bench_holdfast", ids.next(), "bench");
        durable.releaseLock(lockId);
        return lockId;
    }

    @Benchmark
    public String seedTryLockRelease(Ids ids) throws SQLException {
        String lockId = seed.tryLock("bench_seed", ids.next());
        seed.releaseLock(lockId);
        return lockId;
    }

    /**
     * The seed's LockManager algorithm over the same table: in a new transaction select the row,
     * delete it if expired, refuse if live, insert, commit; release deletes in a transaction.
     */
    public static final class SeedLockManager {
        private final HikariDataSource pool;
        private final String select;
        private final String delete;
        private final String insert;
        private final String release;

        public SeedLockManager(HikariDataSource pool, Dialect dialect, String table) {
            this.pool = pool;
            this.select = "SELECT lock_id, CASE WHEN expires_at <= " + dialect.clock() + " THEN 1 ELSE 0 END FROM "
                    + table + " WHERE lock_type = ? AND resource_id = ?";
            this.delete = "DELETE FROM " + table + " WHERE lock_type = ? AND resource_id = ?";
            this.insert = "INSERT INTO " + table
                    + " (lock_type, resource_id, lock_id, lock_owner, acquired_at, expires_at)"
                    + " VALUES (?, ?, ?, 'bench', " + dialect.clock() + ", " + dialect.clockPlusMicros("?") + ")";
            this.release = "DELETE FROM " + table + " WHERE lock_id = ?";
        }

        public String tryLock(String type, String id) throws SQLException {
            try (Connection c = pool.getConnection()) {
                c.setAutoCommit(false);
                try {
                    try (PreparedStatement ps = c.prepareStatement(select)) {
                        ps.setString(1, type);
                        ps.setString(2, id);
                        try (ResultSet rs = ps.executeQuery()) {
                            if (rs.next()) {
                                if (rs.getInt(2) == 0) {
                                    throw new IllegalStateException("already locked: " + id);
                                }
                                try (PreparedStatement del = c.prepareStatement(delete)) {
                                    del.setString(1, type);
                                    del.setString(2, id);
                                    del.executeUpdate();
                                }
                            }
                        }
                    }
                    String lockId = UUID.randomUUID().toString().replace("-", "");
                    try (PreparedStatement ps = c.prepareStatement(insert)) {
                        ps.setString(1, type);
                        ps.setString(2, id);
                        ps.setString(3, lockId);
                        ps.setLong(4, 300_000_000L);
                        ps.executeUpdate();
                    }
                    c.commit();
                    return lockId;
                } catch (SQLException | RuntimeException e) {
                    c.rollback();
                    throw e;
                } finally {
                    c.setAutoCommit(true);
                }
            }
        }

        public void releaseLock(String lockId) throws SQLException {
            try (Connection c = pool.getConnection()) {
                c.setAutoCommit(false);
                try (PreparedStatement ps = c.prepareStatement(release)) {
                    ps.setString(1, lockId);
                    ps.executeUpdate();
                    c.commit();
                } catch (SQLException | RuntimeException e) {
                    c.rollback();
                    throw e;
                } finally {
                    c.setAutoCommit(true);
                }
            }
        }
    }
}
