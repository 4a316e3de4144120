package dev.holdfast.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.pessimistic.LockWait;
import dev.holdfast.pessimistic.PessimisticLocks;
import dev.holdfast.pessimistic.RowRef;
import dev.holdfast.testing.TestDatabase;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;

/**
 * A cross-check of {@link RowLockBenchmark} that is robust to load drifting on a shared machine
 * ({@link Interleaved}): uncontended lock of one row plus commit, ratios to the plain
 * {@code FOR UPDATE}. Usage:
 * {@code java -cp benchmarks.jar dev.holdfast.benchmarks.RowLockInterleaved <db> <rounds> <opsPerBlock> <out.json>}.
 */
public final class RowLockInterleaved {

    public static void main(String[] args) throws Exception {
        String database = args[0];
        TestDatabase.Kind kind = TestDatabase.Kind.valueOf(database.toUpperCase(Locale.ROOT));
        String table = "holdfast_bench_rowlock_ab";
        try (HikariDataSource pool = kind.newPool("bench-rowlock-ab", 2);
                Connection c = pool.getConnection()) {
            try (Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS " + table);
                s.execute("CREATE TABLE " + table + " (id BIGINT PRIMARY KEY, val INT)");
                s.execute("INSERT INTO " + table + " VALUES (1, 0)");
            }
            c.setAutoCommit(false);
            PessimisticLocks locks = PessimisticLocks.of(pool);
            RowRef row = RowRef.of(table, 1L);
            LockWait bound = LockWait.atMost(Duration.ofSeconds(3));
            String sql = "SELECT 1 FROM " + table + " WHERE id = ? FOR UPDATE";
            try (PreparedStatement reused = c.prepareStatement(sql)) {
                new Interleaved()
                        .add("plainForUpdate", i -> {
                            try (PreparedStatement ps = c.prepareStatement(sql)) {
                                ps.setLong(1, 1L);
                                try (ResultSet rs = ps.executeQuery()) {
                                    rs.next();
                                }
                            }
                            c.commit();
                        })
                        .add("holdfastBoundedForUpdate", i -> {
                            locks.forUpdate(c, row, bound);
                            c.commit();
                        })
                        .add("plainForUpdateReusedStatement", i -> {
                            reused.setLong(1, 1L);
                            try (ResultSet rs = reused.executeQuery()) {
                                rs.next();
                            }
                            c.commit();
                        })
                        .run(
                                database,
                                "plainForUpdate",
                                Integer.parseInt(args[1]),
                                Integer.parseInt(args[2]),
                                Path.of(args[3]));
            }
            c.setAutoCommit(true);
            try (Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS " + table);
            }
        }
    }
}
