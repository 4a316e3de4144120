package dev.holdfast.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.jdbc.CommitDurability;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseService;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;

/**
 * Acquire + release pairs per second on distinct names (no contention), at 1 and 8 threads, side by
 * side: Holdfast (fast release, the default; and fully durable release), ShedLock
 * {@code JdbcTemplateLockProvider} with {@code usingDbTime()}, Spring Integration
 * {@code JdbcLockRegistry}, the seed's dist_lock algorithm, and the {@code limit}: two auto-commit
 * single-row UPDATEs per pair, the cost of two commits with no lock logic. Every implementation
 * borrows a connection from a pool per statement or transaction, as an application would (the
 * seed from a pool of manual-commit connections). Method names: implementation, then thread count.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(1)
public class LeaseBenchmark {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final String LEASE_TABLE = "holdfast_bench_lease";

    /** Shared per benchmark: the database and one pool per implementation, created on first use. */
    @State(Scope.Benchmark)
    public static class Db {
        @Param({"h2", "postgresql", "mariadb"})
        public String database;

        HikariDataSource pool;
        HikariDataSource seedPool;
        LeaseService holdfast;
        LeaseService holdfastDurable;
        JdbcTemplateLockProvider shedLock;
        JdbcLockRegistry springIntegration;
        final AtomicInteger threads = new AtomicInteger();

        @Setup(Level.Trial)
        public void setUp() throws SQLException {
            pool = LeasePeers.kind(database).newPool("bench-lease-" + database, 9);
            seedPool = LeasePeers.manualCommitPool(LeasePeers.kind(database), 9);
            LeasePeers.execute(
                    pool, "DROP TABLE IF EXISTS " + LEASE_TABLE, "DROP TABLE IF EXISTS " + LEASE_TABLE + "_queue");
            new SchemaInstaller(pool).install(HoldfastTable.LEASES, LEASE_TABLE);
            holdfast = LeaseService.builder(pool).table(LEASE_TABLE).build();
            holdfastDurable = LeaseService.builder(pool)
                    .table(LEASE_TABLE)
                    .durability(CommitDurability.DURABLE)
                    .build();
            shedLock = LeasePeers.shedLock(pool, LeasePeers.kind(database));
            LeasePeers.createSpringIntegrationTable(pool, LeasePeers.kind(database));
            springIntegration = LeasePeers.springIntegration(pool);
            LeasePeers.createSeedTable(pool, 8, 8);
            LeasePeers.createLimitTable(pool, 64);
        }

        @TearDown(Level.Trial)
        public void tearDown() throws SQLException {
            holdfast.close();
            holdfastDurable.close();
            LeasePeers.execute(
                    pool,
                    "DROP TABLE IF EXISTS " + LEASE_TABLE,
                    "DROP TABLE IF EXISTS " + LEASE_TABLE + "_queue",
                    "DROP TABLE IF EXISTS " + LeasePeers.SHEDLOCK_TABLE,
                    "DROP TABLE IF EXISTS " + LeasePeers.SEED_TABLE,
                    "DROP TABLE IF EXISTS " + LeasePeers.LIMIT_TABLE);
            LeasePeers.dropSpringIntegrationTable(pool);
            pool.close();
            seedPool.close();
        }
    }

    /** Per thread: its own names, distinct from every other thread's. */
    @State(Scope.Thread)
    public static class Worker {
        int id;
        int next;
        String owner;

        @Setup(Level.Trial)
        public void setUp(Db db) {
            id = db.threads.getAndIncrement();
            owner = "bench-" + id;
        }

        String name() {
            next = (next + 1) & 7;
            return "n" + id + "-" + next;
        }
    }

    private static Lease holdfastPair(Db db, Worker w) {
        Lease lease = db.holdfast.tryAcquire(w.name(), w.owner, TTL).orElseThrow();
        db.holdfast.release(lease);
        return lease;
    }

    private static Lease holdfastDurablePair(Db db, Worker w) {
        Lease lease = db.holdfastDurable.tryAcquire(w.name(), w.owner, TTL).orElseThrow();
        db.holdfastDurable.release(lease);
        return lease;
    }

    private static SimpleLock shedlockPair(Db db, Worker w) {
        SimpleLock lock = db.shedLock
                .lock(new LockConfiguration(Instant.now(), w.name(), TTL, Duration.ZERO))
                .orElseThrow();
        lock.unlock();
        return lock;
    }

    private static boolean springIntegrationPair(Db db, Worker w) {
        Lock lock = db.springIntegration.obtain(w.name());
        boolean locked = lock.tryLock();
        if (locked) {
            lock.unlock();
        }
        return locked;
    }

    private static boolean seedPair(Db db, Worker w) throws SQLException {
        String name = w.name();
        try (Connection c = db.seedPool.getConnection()) {
            if (!LeasePeers.seedTryLock(c, name, w.owner, TTL)) {
                throw new IllegalStateException("seed refused a free name");
            }
            return LeasePeers.seedUnlock(c, name, w.owner);
        }
    }

    private static int limitPair(Db db, Worker w) throws SQLException {
        int rows = 0;
        for (int i = 0; i < 2; i++) {
            try (Connection c = db.pool.getConnection();
                    PreparedStatement ps =
                            c.prepareStatement("UPDATE " + LeasePeers.LIMIT_TABLE + " SET v = v + 1 WHERE id = ?")) {
                ps.setInt(1, w.id);
                rows += ps.executeUpdate();
            }
        }
        return rows;
    }

    @Benchmark
    @Threads(1)
    public Lease holdfast1(Db db, Worker w) {
        return holdfastPair(db, w);
    }

    @Benchmark
    @Threads(8)
    public Lease holdfast8(Db db, Worker w) {
        return holdfastPair(db, w);
    }

    @Benchmark
    @Threads(1)
    public Lease holdfastDurableRelease1(Db db, Worker w) {
        return holdfastDurablePair(db, w);
    }

    @Benchmark
    @Threads(8)
    public Lease holdfastDurableRelease8(Db db, Worker w) {
        return holdfastDurablePair(db, w);
    }

    @Benchmark
    @Threads(1)
    public SimpleLock shedlock1(Db db, Worker w) {
        return shedlockPair(db, w);
    }

    @Benchmark
    @Threads(8)
    public SimpleLock shedlock8(Db db, Worker w) {
        return shedlockPair(db, w);
    }

    @Benchmark
    @Threads(1)
    public boolean springIntegration1(Db db, Worker w) {
        return springIntegrationPair(db, w);
    }

    @Benchmark
    @Threads(8)
    public boolean springIntegration8(Db db, Worker w) {
        return springIntegrationPair(db, w);
    }

    @Benchmark
    @Threads(1)
    public boolean seed1(Db db, Worker w) throws SQLException {
        return seedPair(db, w);
    }

    @Benchmark
    @Threads(8)
    public boolean seed8(Db db, Worker w) throws SQLException {
        return seedPair(db, w);
    }

    @Benchmark
    @Threads(1)
    public int limit1(Db db, Worker w) throws SQLException {
        return limitPair(db, w);
    }

    @Benchmark
    @Threads(8)
    public int limit8(Db db, Worker w) throws SQLException {
        return limitPair(db, w);
    }
}
