package dev.holdfast.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.lease.Leases;
import dev.holdfast.pessimistic.LockWait;
import dev.holdfast.pessimistic.PessimisticLocks;
import dev.holdfast.pessimistic.RowRef;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.pessimistic.offline.LockManager;
import dev.holdfast.spring.boot.observation.ObservedLeases;
import dev.holdfast.spring.boot.observation.ObservedLockManager;
import dev.holdfast.spring.boot.observation.PessimisticLockObservations;
import dev.holdfast.testing.TestDatabase;
import io.micrometer.observation.ObservationRegistry;
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

import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * What the starter's observations cost when no registry is configured: each technique's call plain, observed
 * through {@link ObservationRegistry#NOOP}, and observed through a registry with no handler (what an application
 * with Micrometer but no meter or tracing handler has). The fastest real calls (H2 in memory) show the largest
 * ratio. JMH: {@code java -jar benchmarks.jar ObservationOverhead -p database=h2}; interleaved cross-check, the
 * one {@code docs/benchmarks.md} reports: {@code java -cp benchmarks.jar dev.holdfast.benchmarks.ObservationOverhead
 * <db> <rounds> <opsPerBlock> <out-prefix>} (writes {@code <out-prefix>-<technique>.json}), with the plain call
 * twice (the {@code …PlainAgain} rows show the noise) and, first, the observed path over a stub without a database.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(1)
public class ObservationOverhead {

    @Param({"h2", "postgresql", "mariadb"})
    public String database;

    private HikariDataSource pool;
    private Connection connection;
    private final RowRef row = RowRef.of("holdfast_bench_obs_rows", 1L);
    private final LockWait bound = LockWait.atMost(Duration.ofSeconds(3));
    private PessimisticLocks plainLocks;
    private PessimisticLocks noopLocks;
    private PessimisticLocks noHandlerLocks;
    private JdbcLockManager plainOffline;
    private LockManager noopOffline;
    private LeaseService plainLeases;
    private Leases noopLeases;
    private Leases noHandlerLeases;
    private int n;

    @Setup(Level.Trial)
    public void setUp() throws SQLException {
        pool = TestDatabase.Kind.valueOf(database.toUpperCase(Locale.ROOT)).newPool("bench-obs-" + database, 4);
        connection = pool.getConnection();
        try (Statement s = connection.createStatement()) {
            s.execute("DROP TABLE IF EXISTS holdfast_bench_obs_rows");
            s.execute("CREATE TABLE holdfast_bench_obs_rows (id BIGINT PRIMARY KEY, val INT)");
            s.execute("INSERT INTO holdfast_bench_obs_rows VALUES (1, 0)");
            s.execute("DROP TABLE IF EXISTS holdfast_bench_obs_locks");
            s.execute("DROP TABLE IF EXISTS holdfast_bench_obs_leases_queue");
            s.execute("DROP TABLE IF EXISTS holdfast_bench_obs_leases");
        }
        connection.setAutoCommit(false);
        SchemaInstaller schema = new SchemaInstaller(pool);
        Dialect dialect = Dialect.detect(pool);
        if (dialect == Dialect.H2) {
            schema.installClock();
        }
        schema.install(HoldfastTable.OFFLINE_LOCKS, "holdfast_bench_obs_locks");
        schema.install(HoldfastTable.LEASES, "holdfast_bench_obs_leases");
        ObservationRegistry noHandler = ObservationRegistry.create();
        plainLocks = PessimisticLocks.of(pool);
        noopLocks = plainLocks.observedBy(new PessimisticLockObservations(ObservationRegistry.NOOP, dialect));
        noHandlerLocks = plainLocks.observedBy(new PessimisticLockObservations(noHandler, dialect));
        plainOffline =
                JdbcLockManager.builder(pool).table("holdfast_bench_obs_locks").build();
        noopOffline = new ObservedLockManager(plainOffline, ObservationRegistry.NOOP, dialect);
        plainLeases =
                LeaseService.builder(pool).table("holdfast_bench_obs_leases").build();
        noopLeases = new ObservedLeases(plainLeases, ObservationRegistry.NOOP, dialect);
        noHandlerLeases = new ObservedLeases(plainLeases, noHandler, dialect);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws SQLException {
        plainLeases.close();
        connection.rollback();
        connection.close();
        pool.close();
    }

    @Benchmark
    public boolean rowLockPlain() throws SQLException {
        return rowLock(plainLocks);
    }

    @Benchmark
    public boolean rowLockObservedNoop() throws SQLException {
        return rowLock(noopLocks);
    }

    @Benchmark
    public boolean rowLockObservedNoHandler() throws SQLException {
        return rowLock(noHandlerLocks);
    }

    @Benchmark
    public void offlineLockPlain() {
        offlineLock(plainOffline);
    }

    @Benchmark
    public void offlineLockObservedNoop() {
        offlineLock(noopOffline);
    }

    @Benchmark
    public void leasePlain() {
        lease(plainLeases);
    }

    @Benchmark
    public void leaseObservedNoop() {
        lease(noopLeases);
    }

    @Benchmark
    public void leaseObservedNoHandler() {
        lease(noHandlerLeases);
    }

    private boolean rowLock(PessimisticLocks locks) throws SQLException {
        boolean locked = locks.forUpdate(connection, row, bound);
        connection.commit();
        return locked;
    }

    private void offlineLock(LockManager locks) {
        locks.releaseLock(locks.tryLock("bench", "r" + (n++ % 1000), "bench"));
    }

    private void lease(Leases leases) {
        leases.release(leases.tryAcquire("bench-" + (n++ % 1000), "bench", Duration.ofMinutes(1))
                .orElseThrow());
    }

    /** The interleaved cross-check: {@code <db> <rounds> <opsPerBlock> <out-prefix>}. */
    public static void main(String[] args) throws Exception {
        ObservationOverhead b = new ObservationOverhead();
        b.database = args[0];
        int rounds = Integer.parseInt(args[1]);
        int block = Integer.parseInt(args[2]);
        // Without a database: the observed path's own cost, over a stub that returns at once.
        Leases stub = (Leases) Proxy.newProxyInstance(
                Leases.class.getClassLoader(),
                new Class<?>[] {Leases.class},
                (proxy, method, arguments) -> Optional.empty());
        Leases stubNoop = new ObservedLeases(stub, ObservationRegistry.NOOP, Dialect.H2);
        Leases stubNoHandler = new ObservedLeases(stub, ObservationRegistry.create(), Dialect.H2);
        Duration ttl = Duration.ofMinutes(1);
        new Interleaved()
                .add("stubLeasePlain", i -> stub.tryAcquire("bench", "bench", ttl))
                .add("stubLeaseObservedNoop", i -> stubNoop.tryAcquire("bench", "bench", ttl))
                .add("stubLeaseObservedNoHandler", i -> stubNoHandler.tryAcquire("bench", "bench", ttl))
                .run("none", "stubLeasePlain", rounds, block * 200, Path.of(args[3] + "-stub.json"));
        b.setUp();
        try {
            new Interleaved()
                    .add("rowLockPlain", i -> b.rowLockPlain())
                    .add("rowLockPlainAgain", i -> b.rowLockPlain())
                    .add("rowLockObservedNoop", i -> b.rowLockObservedNoop())
                    .add("rowLockObservedNoHandler", i -> b.rowLockObservedNoHandler())
                    .run(b.database, "rowLockPlain", rounds, block, Path.of(args[3] + "-rowlock.json"));
            new Interleaved()
                    .add("offlineLockPlain", i -> b.offlineLockPlain())
                    .add("offlineLockPlainAgain", i -> b.offlineLockPlain())
                    .add("offlineLockObservedNoop", i -> b.offlineLockObservedNoop())
                    .run(b.database, "offlineLockPlain", rounds, block, Path.of(args[3] + "-offline.json"));
            new Interleaved()
                    .add("leasePlain", i -> b.leasePlain())
                    .add("leasePlainAgain", i -> b.leasePlain())
                    .add("leaseObservedNoop", i -> b.leaseObservedNoop())
                    .add("leaseObservedNoHandler", i -> b.leaseObservedNoHandler())
                    .run(b.database, "leasePlain", rounds, block, Path.of(args[3] + "-lease.json"));
        } finally {
            b.tearDown();
        }
    }
}
