package dev.holdfast.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.lease.internal.LeaseRow;
import dev.holdfast.lease.internal.LeaseSql;
import dev.holdfast.lease.internal.LeaseStore;
import dev.holdfast.lease.internal.LeaseStores;
import dev.holdfast.testing.TestDatabase;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;
import javax.sql.DataSource;

/**
 * Where the uncontended lease path spends its time against the one-statement design, one thread,
 * one pooled connection, distinct names (8, cycled): each step adds one difference, in blocks that
 * alternate (rotating which goes first), medians of the blocks.
 * <ol>
 *   <li>{@code design}: the design's upsert and release, one borrow per pair (as {@code LeaseInterleaved});</li>
 *   <li>{@code designTwoBorrows}: the same, one borrow per statement (as a service, whose acquire and
 *       release are separate calls);</li>
 *   <li>{@code designOnLeaseTable}: the same statements on Holdfast's lease table (its wider rows);</li>
 *   <li>{@code leaseSql}: Holdfast's own statements ({@link LeaseSql}) and result reading, by hand;</li>
 *   <li>{@code service}: {@link LeaseService#tryAcquire} and {@link LeaseService#release}.</li>
 * </ol>
 * Run: {@code java -cp benchmarks/target/benchmarks.jar dev.holdfast.benchmarks.LeaseOverhead mariadb 15 2000 out.json}
 */
public final class LeaseOverhead {

    private static final String LEASES = "holdfast_bench_lease_overhead";
    private static final long TTL_MICROS = Duration.ofSeconds(60).toNanos() / 1000;

    public static void main(String[] args) throws Exception {
        TestDatabase.Kind kind = TestDatabase.Kind.valueOf(args[0].toUpperCase(Locale.ROOT));
        int rounds = Integer.parseInt(args[1]);
        int block = Integer.parseInt(args[2]);
        Path out = Path.of(args[3]);
        Dialect dialect = Dialect.valueOf(kind.name());
        try (HikariDataSource pool = kind.newPool("bench-lease-overhead", 1)) {
            try (Connection c = pool.getConnection();
                    Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS " + LEASES);
                s.execute("DROP TABLE IF EXISTS " + LEASES + "_queue");
            }
            new SchemaInstaller(pool).install(HoldfastTable.LEASES, LEASES);
            LeaseInterleaved.createDesignTable(pool, kind);
            LeaseStore jdbc = LeaseStores.forDialect(dialect, LEASES);
            LeaseSql sql = jdbc.sql();
            LeaseService service =
                    LeaseService.builder(pool).table(LEASES).dialect(dialect).build();
            new Interleaved()
                    .add("design", i -> LeaseInterleaved.designPair(pool, kind, name(i), "bench"))
                    .add("designTwoBorrows", i -> designPair(pool, kind, LeaseInterleaved.DESIGN_TABLE, name(i)))
                    .add("designOnLeaseTable", i -> designPair(pool, kind, LEASES, name(i)))
                    .add("leaseSql", i -> {
                        LeaseRow lease;
                        try (Connection c = pool.getConnection()) {
                            lease = jdbc.acquire(c, name(i), "bench", TTL_MICROS, false)
                                    .orElseThrow();
                        }
                        try (Connection c = pool.getConnection()) {
                            if (!jdbc.release(c, lease.name(), lease.owner(), lease.token(), true, null)) {
                                throw new IllegalStateException("not released");
                            }
                        }
                    })
                    .add(
                            "service",
                            i -> service.release(service.tryAcquire(name(i), "bench", Duration.ofSeconds(60))
                                    .orElseThrow()))
                    .run(kind.name().toLowerCase(Locale.ROOT), "design", rounds, block, out);
            service.close();
            try (Connection c = pool.getConnection();
                    Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS " + LEASES);
                s.execute("DROP TABLE IF EXISTS " + LEASES + "_queue");
                s.execute("DROP TABLE IF EXISTS " + LeaseInterleaved.DESIGN_TABLE);
            }
        }
    }

    private static String name(int i) {
        return "n-" + (i & 7);
    }

    /** The design's statements on {@code table}, each on a connection of its own. */
    private static void designPair(DataSource ds, TestDatabase.Kind kind, String table, String name)
            throws SQLException {
        long token;
        try (Connection c = ds.getConnection()) {
            token = LeaseInterleaved.designAcquire(c, kind, table, name, "bench");
        }
        try (Connection c = ds.getConnection()) {
            LeaseInterleaved.designRelease(c, kind, table, name, "bench", token);
        }
    }
}
