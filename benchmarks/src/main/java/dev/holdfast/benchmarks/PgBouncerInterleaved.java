package dev.holdfast.benchmarks;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.pessimistic.LockWait;
import dev.holdfast.pessimistic.PessimisticLocks;
import dev.holdfast.pessimistic.RowRef;
import dev.holdfast.testing.TestDatabase;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;

/**
 * PostgreSQL directly and through PgBouncer in transaction pooling mode ({@code scripts/pgbouncer.sh up};
 * {@code HOLDFAST_PGBOUNCER_URL}), in one run ({@link Interleaved}, one thread): an uncontended lease
 * ({@code tryAcquire} + {@code release}, names rotating over 8) and a bounded row lock (3 s) plus
 * commit, each through both; the lease also directly with {@code prepareThreshold=0}, the setting
 * PgBouncer needs, to tell its cost from the pooler's. The baseline is the direct lease; the row-lock ratio is the ratio of
 * its two medians. Each implementation has a pool of its own. Usage: {@code java -cp benchmarks.jar
 * dev.holdfast.benchmarks.PgBouncerInterleaved <rounds> <opsPerBlock> <out.json>}.
 */
public final class PgBouncerInterleaved {

    private static final String LEASES = "holdfast_bench_bouncer_leases";
    private static final String ROWS = "holdfast_bench_bouncer_rows";

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        int block = Integer.parseInt(args[1]);
        Path out = Path.of(args[2]);
        TestDatabase.Entry pg = TestDatabase.Entry.POSTGRESQL;
        try (HikariDataSource direct = pg.newPool("bench-bouncer-direct", 2);
                // direct too, with the URL parameter PgBouncer needs: what the parameter costs by itself
                HikariDataSource unprepared = pool(
                        pg.url() + (pg.url().contains("?") ? "&" : "?") + "prepareThreshold=0",
                        pg.user(),
                        pg.password());
                HikariDataSource bounced = TestDatabase.Entry.PGBOUNCER.newPool("bench-bouncer-pooled", 2)) {
            try (Connection c = direct.getConnection();
                    Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS " + LEASES + "_queue");
                s.execute("DROP TABLE IF EXISTS " + LEASES);
                s.execute("DROP TABLE IF EXISTS " + ROWS);
                s.execute("CREATE TABLE " + ROWS + " (id BIGINT PRIMARY KEY, val INT)");
                s.execute("INSERT INTO " + ROWS + " VALUES (1, 0), (2, 0)");
            }
            new SchemaInstaller(direct).install(HoldfastTable.LEASES, LEASES);
            try (LeaseService leasesDirect =
                            LeaseService.builder(direct).table(LEASES).build();
                    LeaseService leasesUnprepared =
                            LeaseService.builder(unprepared).table(LEASES).build();
                    LeaseService leasesBounced =
                            LeaseService.builder(bounced).table(LEASES).build();
                    Connection rowsDirect = direct.getConnection();
                    Connection rowsBounced = bounced.getConnection()) {
                rowsDirect.setAutoCommit(false);
                rowsBounced.setAutoCommit(false);
                PessimisticLocks locksDirect = PessimisticLocks.of(direct);
                PessimisticLocks locksBounced = PessimisticLocks.of(bounced);
                LockWait bound = LockWait.atMost(Duration.ofSeconds(3));
                Duration ttl = Duration.ofSeconds(60);
                new Interleaved()
                        .add("leaseDirect", i -> {
                            Lease lease = leasesDirect
                                    .tryAcquire("d" + (i % 8), "bench", ttl)
                                    .orElseThrow();
                            leasesDirect.release(lease);
                        })
                        .add("leaseDirectPrepareThreshold0", i -> {
                            Lease lease = leasesUnprepared
                                    .tryAcquire("u" + (i % 8), "bench", ttl)
                                    .orElseThrow();
                            leasesUnprepared.release(lease);
                        })
                        .add("leasePgBouncer", i -> {
                            Lease lease = leasesBounced
                                    .tryAcquire("b" + (i % 8), "bench", ttl)
                                    .orElseThrow();
                            leasesBounced.release(lease);
                        })
                        .add("rowLockDirect", i -> {
                            locksDirect.forUpdate(rowsDirect, RowRef.of(ROWS, 1L), bound);
                            rowsDirect.commit();
                        })
                        .add("rowLockPgBouncer", i -> {
                            locksBounced.forUpdate(rowsBounced, RowRef.of(ROWS, 2L), bound);
                            rowsBounced.commit();
                        })
                        .run("postgresql-vs-pgbouncer", "leaseDirect", rounds, block, out);
            } finally {
                try (Connection c = direct.getConnection();
                        Statement s = c.createStatement()) {
                    s.execute("DROP TABLE IF EXISTS " + LEASES + "_queue");
                    s.execute("DROP TABLE IF EXISTS " + LEASES);
                    s.execute("DROP TABLE IF EXISTS " + ROWS);
                }
            }
        }
    }

    private static HikariDataSource pool(String url, String user, String password) {
        HikariConfig config = new HikariConfig();
        config.setPoolName("bench-bouncer-unprepared");
        config.setJdbcUrl(url);
        config.setUsername(user);
        config.setPassword(password);
        config.setMaximumPoolSize(2);
        return new HikariDataSource(config);
    }

    private PgBouncerInterleaved() {}
}
