package dev.holdfast.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.pessimistic.LockWait;
import dev.holdfast.pessimistic.PessimisticLocks;
import dev.holdfast.pessimistic.RowRef;
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
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Uncontended {@code SELECT … FOR UPDATE} of one row plus commit: plain (no bound, the server's
 * default wait) versus Holdfast's bounded lock (3 s). The ratio {@code holdfastBoundedForUpdate /
 * plainForUpdate} is the cost of a bound that holds. Both prepare their statement per call, as a
 * caller using {@code JdbcTemplate} would; {@code plainForUpdateReusedStatement} keeps one
 * prepared statement open for the whole run, the cheapest any caller can get.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 3)
@Fork(1)
public class RowLockBenchmark {

    @Param({"h2", "postgresql", "mariadb"})
    public String database;

    private HikariDataSource pool;
    private Connection connection;
    private PessimisticLocks locks;
    private PreparedStatement plain;
    private final String table = "holdfast_bench_rowlock";
    private final LockWait bound = LockWait.atMost(Duration.ofSeconds(3));
    private final RowRef row = RowRef.of(table, 1L);

    @Setup(Level.Trial)
    public void setUp() throws SQLException {
        TestDatabase.Kind kind = TestDatabase.Kind.valueOf(database.toUpperCase(Locale.ROOT));
        pool = kind.newPool("bench-" + database, 2);
        connection = pool.getConnection();
        try (Statement s = connection.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + table);
            s.execute("CREATE TABLE " + table + " (id BIGINT PRIMARY KEY, val INT)");
            s.execute("INSERT INTO " + table + " VALUES (1, 0)");
        }
        connection.setAutoCommit(false);
        locks = PessimisticLocks.of(pool);
        plain = connection.prepareStatement("SELECT 1 FROM " + table + " WHERE id = ? FOR UPDATE");
    }

    @TearDown(Level.Trial)
    public void tearDown() throws SQLException {
        plain.close();
        connection.setAutoCommit(true);
        try (Statement s = connection.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + table);
        }
        connection.close();
        pool.close();
    }

    @Benchmark
    public boolean plainForUpdate() throws SQLException {
        boolean found;
        try (PreparedStatement ps =
                connection.prepareStatement("SELECT 1 FROM " + table + " WHERE id = ? FOR UPDATE")) {
            ps.setLong(1, 1L);
            try (ResultSet rs = ps.executeQuery()) {
                found = rs.next();
            }
        }
        connection.commit();
        return found;
    }

    @Benchmark
    public boolean plainForUpdateReusedStatement() throws SQLException {
        plain.setLong(1, 1L);
        boolean found;
        try (ResultSet rs = plain.executeQuery()) {
            found = rs.next();
        }
        connection.commit();
        return found;
    }

    @Benchmark
    public boolean holdfastBoundedForUpdate() throws SQLException {
        boolean found = locks.forUpdate(connection, row, bound);
        connection.commit();
        return found;
    }
}
