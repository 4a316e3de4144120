package dev.holdfast.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.optimistic.Assignments;
import dev.holdfast.optimistic.VersionedTable;
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
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * One auto-committed single-row update: plain ({@code SET street = ?, counter = ? WHERE id = ?})
 * versus Holdfast's versioned update of the same columns (plus {@code version = version + 1,
 * modified_by, modified = <db clock>} and {@code AND version = ?}). The ratio is the cost of
 * optimistic locking.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(1)
public class VersionedUpdateBenchmark {

    @Param({"h2", "postgresql", "mariadb"})
    public String database;

    private final String table = "holdfast_bench_opt_versioned";
    private HikariDataSource pool;
    private Connection connection;
    private PreparedStatement plain;
    private VersionedTable versioned;
    private long version;
    private long counter;

    @Setup(Level.Trial)
    public void setUp() throws SQLException {
        TestDatabase.Kind kind = TestDatabase.Kind.valueOf(database.toUpperCase(Locale.ROOT));
        pool = kind.newPool("bench-opt-" + database, 2);
        Dialect dialect = Dialect.detect(pool);
        new SchemaInstaller(pool, dialect).installClock();
        String timestamp = switch (dialect) {
            case H2 -> "TIMESTAMP WITH TIME ZONE";
            case POSTGRESQL -> "TIMESTAMPTZ";
            case MARIADB -> "DATETIME(6)";
        };
        connection = pool.getConnection();
        try (Statement s = connection.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + table);
            s.execute("CREATE TABLE " + table + " (id BIGINT PRIMARY KEY, street VARCHAR(200), counter BIGINT,"
                    + " version BIGINT NOT NULL, modified_by VARCHAR(100), modified " + timestamp + ")");
            s.execute("INSERT INTO " + table + " (id, street, counter, version) VALUES (1, 'a', 0, 0)");
            s.execute("INSERT INTO " + table + " (id, street, counter, version) VALUES (2, 'a', 0, 0)");
        }
        plain = connection.prepareStatement("UPDATE " + table + " SET street = ?, counter = ? WHERE id = ?");
        versioned = VersionedTable.builder(table).entity("row").dialect(dialect).build();
    }

    @TearDown(Level.Trial)
    public void tearDown() throws SQLException {
        plain.close();
        try (Statement s = connection.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + table);
        }
        connection.close();
        pool.close();
    }

    @Benchmark
    public int plainUpdate() throws SQLException {
        plain.setString(1, "Main 1");
        plain.setLong(2, ++counter);
        plain.setLong(3, 2L);
        return plain.executeUpdate();
    }

    @Benchmark
    public long versionedUpdate() {
        version = versioned.update(
                connection,
                1L,
                version,
                "bench",
                Assignments.of("street", "Main 1").and("counter", ++counter));
        return version;
    }
}
