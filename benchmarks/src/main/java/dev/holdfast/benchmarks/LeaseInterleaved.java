package dev.holdfast.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.jdbc.CommitDurability;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.lease.Batching;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.testing.TestDatabase;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import javax.sql.DataSource;

/**
 * The uncontended lease path against the design it implements, robust to a drifting machine:
 * distinct names (each thread its own 8), acquire then release, {@code threads} threads, the
 * implementations alternating in blocks of {@code blockMillis} (rotating which goes first) for
 * {@code rounds} rounds after two warm-up rounds; medians of the per-block rates and their ratios to
 * the one-statement design. Each implementation has its own pool of {@code threads} connections.
 *
 * <ul>
 *   <li>{@code holdfast}: {@link LeaseService#tryAcquire} + {@link LeaseService#release} (fast release);</li>
 *   <li>{@code holdfastBatched}: the same with {@code batching(Batching.CONCURRENT)}: concurrent calls share multi-row statements;</li>
 *   <li>{@code holdfastDurableRelease}: the same with {@code durability(CommitDurability.DURABLE)};</li>
 *   <li>{@code oneStatement}: the design written by hand: one upsert that grants with the next token
 *       by database time and returns it, one {@code UPDATE} that releases, both auto-commit, durable;</li>
 *   <li>{@code shedLock}: ShedLock's JDBC template provider, database time;</li>
 *   <li>{@code springIntegration}: one {@code JdbcLockRegistry}, {@code tryLock()} and {@code unlock()};</li>
 *   <li>{@code redisson}: Redisson's {@code RLock} on the local Redis (which does not fsync);</li>
 *   <li>{@code bareLockstep}: the service's two batch statements in lockstep with nothing else ({@link BareLockstep}):
 *       the ceiling of any lockstep batching with this many threads here;</li>
 *   <li>{@code bareOneCommit}: the same with odd threads a phase behind, so that each phase commits one half's
 *       acquires and the other half's releases together, two statements in one transaction;</li>
 *   <li>{@code bareOneStatement} (PostgreSQL): the same joined into one statement of data-modifying CTEs: one
 *       statement and one commit per cycle;</li>
 *   <li>{@code limit}: two single-row auto-commit updates per pair, the cost of two commits;</li>
 *   <li>{@code floor} (PostgreSQL): the same two updates, the second committed without waiting for the
 *       WAL flush: the least any lease whose grants are durable and whose releases skip the flush (as
 *       Holdfast's fast release) can wait per pair without batching. On MariaDB and H2, whose commits
 *       are all alike, it is the limit.</li>
 * </ul>
 * Each line also says how long connections were held per pair (from {@code getConnection} to {@code close}):
 * with one statement in flight, that times the number of threads is the time statements take of a cycle.
 * Before the timed rounds, one counted pass on one thread reports JDBC executes (round trips) and SQL
 * statements per pair for each implementation; the timed rounds report executes per pair under load
 * too (batching shares them). Usage: {@code java -cp benchmarks.jar
 * dev.holdfast.benchmarks.LeaseInterleaved <db> <threads> <rounds> <blockMillis> <out.json> [implementations]},
 * the last a comma-separated subset (the one-statement baseline always runs).
 */
public final class LeaseInterleaved {

    static final Duration TTL = Duration.ofSeconds(60);
    static final String TABLE = "holdfast_bench_lease_ab";
    public static final String DESIGN_TABLE = "holdfast_bench_lease_design";

    /** One acquire-and-release of thread {@code t}'s {@code i}-th name. */
    public interface Pair {
        void run(int t, int i) throws Exception;

        /** Before a block's threads start: {@code threads} of them will run. */
        default void startBlock(int threads) {}

        /** Thread {@code t} of the block runs no more pairs. */
        default void finish(int t) {}
    }

    static final List<String> IMPLEMENTATIONS = List.of(
            "oneStatement",
            "holdfast",
            "holdfastBatched",
            "holdfastDurableRelease",
            "shedLock",
            "springIntegration",
            "redisson",
            "bareLockstep",
            "bareOneCommit",
            "bareOneStatement",
            "limit",
            "floor");

    /** Spring Integration's refusals of a name nobody held (each thread has its own names). */
    static final AtomicLong FALSE_REFUSALS = new AtomicLong();

    public static void main(String[] args) throws Exception {
        String database = args[0];
        int threads = Integer.parseInt(args[1]);
        int rounds = Integer.parseInt(args[2]);
        long blockMillis = Long.parseLong(args[3]);
        Path out = Path.of(args[4]);
        // Optional: only these implementations (the one-statement baseline always runs), so that
        // many threads' pools stay under the server's connection limit.
        List<String> chosen = args.length > 5 ? List.of(args[5].split(",")) : IMPLEMENTATIONS;
        TestDatabase.Kind kind = LeasePeers.kind(database);
        List<HikariDataSource> pools = new ArrayList<>();
        List<Runnable> closers = new ArrayList<>();
        Map<String, Pair> pairs = new LinkedHashMap<>();
        Map<String, LeaseHandoff.Counting> counters = new LinkedHashMap<>();
        try (HikariDataSource admin = kind.newPool("bench-lease-ab-admin", 1)) {
            LeasePeers.execute(admin, "DROP TABLE IF EXISTS " + TABLE, "DROP TABLE IF EXISTS " + TABLE + "_queue");
            new SchemaInstaller(admin).install(HoldfastTable.LEASES, TABLE);
            createDesignTable(admin, kind);
            LeasePeers.createLimitTable(admin, threads * 2);
            for (String implementation : IMPLEMENTATIONS.stream()
                    .filter(i -> i.equals("oneStatement") || chosen.contains(i))
                    .toList()) {
                HikariDataSource pool = kind.newPool("bench-lease-ab-" + implementation, threads);
                pools.add(pool);
                LeaseHandoff.Counting counting = new LeaseHandoff.Counting();
                counters.put(implementation, counting);
                DataSource ds = counting.wrap(pool);
                pairs.put(
                        implementation,
                        switch (implementation) {
                            case "holdfast", "holdfastBatched", "holdfastDurableRelease" -> {
                                LeaseService leases = LeaseService.builder(ds)
                                        .table(TABLE)
                                        .durability(
                                                implementation.equals("holdfastDurableRelease")
                                                        ? CommitDurability.DURABLE
                                                        : CommitDurability.RELAXED)
                                        .batching(
                                                implementation.equals("holdfastBatched")
                                                        ? Batching.CONCURRENT
                                                        : Batching.OFF)
                                        .build();
                                closers.add(() -> System.out.printf(
                                        "%s %d threads %s: %s%n",
                                        database, threads, implementation, leases.batchingStats()));
                                yield (t, i) -> {
                                    Lease lease = leases.tryAcquire(name(t, i), "bench-" + t, TTL)
                                            .orElseThrow();
                                    leases.release(lease);
                                };
                            }
                            case "oneStatement" -> (t, i) -> designPair(ds, kind, name(t, i), "bench-" + t);
                            case "shedLock" -> {
                                JdbcTemplateLockProvider shedLock = LeasePeers.shedLock(ds, kind);
                                yield (t, i) -> {
                                    SimpleLock lock = shedLock.lock(new LockConfiguration(
                                                    Instant.now(), name(t, i), TTL, Duration.ZERO))
                                            .orElseThrow();
                                    lock.unlock();
                                };
                            }
                            case "springIntegration" -> {
                                LeasePeers.createSpringIntegrationTable(admin, kind);
                                JdbcLockRegistry registry = LeasePeers.springIntegration(ds);
                                yield (t, i) -> {
                                    Lock lock = registry.obtain(name(t, i));
                                    // Its tryLock refuses falsely under concurrency (a serialization failure
                                    // inside reads as "held"): asked again until it locks, refusals counted.
                                    while (!lock.tryLock()) {
                                        FALSE_REFUSALS.incrementAndGet();
                                    }
                                    lock.unlock();
                                };
                            }
                            case "redisson" -> {
                                Config config = new Config();
                                config.useSingleServer()
                                        .setAddress("redis://127.0.0.1:6379")
                                        .setConnectionMinimumIdleSize(threads)
                                        .setConnectionPoolSize(threads);
                                RedissonClient client = Redisson.create(config);
                                closers.add(client::shutdown);
                                yield (t, i) -> {
                                    RLock lock = client.getLock("holdfast-bench-lease-ab-" + name(t, i));
                                    if (!lock.tryLock(0, TTL.toMillis(), TimeUnit.MILLISECONDS)) {
                                        throw new IllegalStateException("not locked: " + name(t, i));
                                    }
                                    lock.unlock();
                                };
                            }
                            case "bareLockstep", "bareOneCommit", "bareOneStatement" -> {
                                BareLockstep bare = new BareLockstep(
                                        ds,
                                        Dialect.valueOf(kind.name()),
                                        TABLE,
                                        TTL.toNanos() / 1000,
                                        switch (implementation) {
                                            case "bareOneCommit" -> BareLockstep.Cycle.ONE_COMMIT;
                                            case "bareOneStatement" -> BareLockstep.Cycle.ONE_STATEMENT;
                                            default -> BareLockstep.Cycle.TWO_STATEMENTS;
                                        });
                                yield new Pair() {
                                    @Override
                                    public void run(int t, int i) throws Exception {
                                        bare.pair(t, name(t, i), "bench-" + t);
                                    }

                                    @Override
                                    public void startBlock(int threads) {
                                        bare.startBlock(threads);
                                    }

                                    @Override
                                    public void finish(int t) {
                                        bare.finish(t);
                                    }
                                };
                            }
                            case "limit" -> (t, i) -> limitPair(ds, t, false);
                            case "floor" -> (t, i) -> limitPair(ds, t, kind == TestDatabase.Kind.POSTGRESQL);
                            default -> throw new IllegalArgumentException(implementation);
                        });
            }
            Map<String, double[]> perPair = countOnce(pairs, counters, threads);
            Map<String, List<Double>> rates = new LinkedHashMap<>();
            Map<String, long[]> underLoad =
                    new LinkedHashMap<>(); // executes, pairs, connection-held nanos in the timed blocks
            Map<String, List<Double>> busyPerPair = new LinkedHashMap<>(); // machine CPU, microseconds per pair
            Map<String, List<Double>> clientPerPair = new LinkedHashMap<>(); // this JVM's CPU, microseconds per pair
            pairs.keySet().forEach(k -> {
                rates.put(k, new ArrayList<>());
                underLoad.put(k, new long[3]);
                busyPerPair.put(k, new ArrayList<>());
                clientPerPair.put(k, new ArrayList<>());
            });
            List<String> names = new ArrayList<>(pairs.keySet());
            for (int round = -2; round < rounds; round++) {
                for (int k = 0; k < names.size(); k++) {
                    String name = names.get((k + Math.max(round, 0)) % names.size());
                    long executes = counters.get(name).statements.get();
                    long held = counters.get(name).heldNanos.get();
                    double[] block = block(pairs.get(name), threads, blockMillis);
                    if (round >= 0) {
                        rates.get(name).add(block[0]);
                        underLoad.get(name)[0] += counters.get(name).statements.get() - executes;
                        underLoad.get(name)[1] += (long) block[1];
                        underLoad.get(name)[2] += counters.get(name).heldNanos.get() - held;
                        busyPerPair.get(name).add(block[2] / 1e3 / block[1]);
                        clientPerPair.get(name).add(block[3] / 1e3 / block[1]);
                    }
                }
            }
            underLoad.forEach((k, v) -> perPair.put(k, new double[] {
                perPair.get(k)[0], perPair.get(k)[1], v[0] / (double) Math.max(1, v[1]), v[2] / 1e3 / Math.max(1, v[1])
            }));
            write(database, threads, rounds, blockMillis, rates, perPair, busyPerPair, clientPerPair, out);
            System.out.printf(
                    "%s %d threads: Spring Integration refused a free lock %d times%n",
                    database, threads, FALSE_REFUSALS.get());
        } finally {
            closers.forEach(Runnable::run);
            pools.forEach(HikariDataSource::close);
        }
    }

    private static String name(int t, int i) {
        return "n" + t + "-" + (i & 7);
    }

    /**
     * Runs {@code pair} on {@code threads} threads for about {@code millis}: pairs per second, pairs done,
     * and the CPU the machine and this JVM spent meanwhile, in nanoseconds (NaN where not measurable).
     */
    public static double[] block(Pair pair, int threads, long millis) throws Exception {
        return block(pair, threads, millis, "bench-pair-");
    }

    /** As {@link #block(Pair, int, long)}, the threads named {@code threadPrefix} and their number. */
    static double[] block(Pair pair, int threads, long millis, String threadPrefix) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong done = new AtomicLong();
        AtomicLong failures = new AtomicLong();
        CountDownLatch finished = new CountDownLatch(threads);
        List<Thread> workers = new ArrayList<>();
        pair.startBlock(threads);
        for (int t = 0; t < threads; t++) {
            int thread = t;
            workers.add(new Thread(
                    () -> {
                        int i = 0;
                        try {
                            while (!stop.get()) {
                                pair.run(thread, i++);
                                done.incrementAndGet();
                            }
                        } catch (Exception e) {
                            failures.incrementAndGet();
                            e.printStackTrace();
                        } finally {
                            pair.finish(thread);
                            finished.countDown();
                        }
                    },
                    threadPrefix + t));
        }
        long busyBefore = MachineCpu.busyNanos();
        long clientBefore = MachineCpu.processNanos();
        long start = System.nanoTime();
        workers.forEach(Thread::start);
        Thread.sleep(millis);
        stop.set(true);
        finished.await();
        long elapsed = System.nanoTime() - start;
        double busy = MachineCpu.busyNanos() - busyBefore;
        double client = MachineCpu.processNanos() - clientBefore;
        if (failures.get() > 0) {
            throw new IllegalStateException(failures.get() + " workers failed");
        }
        return new double[] {
            done.get() / (elapsed / 1e9),
            done.get(),
            busyBefore < 0 ? Double.NaN : busy,
            clientBefore < 0 ? Double.NaN : client
        };
    }

    /** One pass of 64 pairs per thread, counting JDBC executes and SQL statements: per pair. */
    private static Map<String, double[]> countOnce(
            Map<String, Pair> pairs, Map<String, LeaseHandoff.Counting> counters, int threads) throws Exception {
        Map<String, double[]> result = new LinkedHashMap<>();
        for (var e : pairs.entrySet()) {
            LeaseHandoff.Counting c = counters.get(e.getKey());
            e.getValue().startBlock(1);
            for (int i = 0; i < 16; i++) {
                e.getValue().run(0, i); // warm: the first call of a service detects and prepares
            }
            long executes = c.statements.get();
            long sql = c.sqlStatements.get();
            int n = 64;
            for (int i = 0; i < n; i++) {
                e.getValue().run(0, i);
            }
            e.getValue().finish(0);
            result.put(e.getKey(), new double[] {
                (c.statements.get() - executes) / (double) n, (c.sqlStatements.get() - sql) / (double) n
            });
        }
        return result;
    }

    public static void createDesignTable(DataSource ds, TestDatabase.Kind kind) throws SQLException {
        createDesignTable(ds, kind, DESIGN_TABLE);
    }

    /** The one-statement design's {@code table} (dropped and created). */
    static void createDesignTable(DataSource ds, TestDatabase.Kind kind, String table) throws SQLException {
        String time = switch (kind) {
            case POSTGRESQL -> "TIMESTAMPTZ";
            case MARIADB -> "DATETIME(6)";
            case H2 -> "TIMESTAMP(6) WITH TIME ZONE";
        };
        LeasePeers.execute(
                ds,
                "DROP TABLE IF EXISTS " + table,
                "CREATE TABLE " + table + " (name VARCHAR(200) NOT NULL PRIMARY KEY, owner VARCHAR(200) NOT NULL,"
                        + " token BIGINT NOT NULL, acquired_at " + time + " NOT NULL, expires_at " + time
                        + " NOT NULL)");
    }

    /** The design by hand: one upsert (granted iff it returns the caller as owner), one release update. */
    public static void designPair(DataSource ds, TestDatabase.Kind kind, String name, String owner)
            throws SQLException {
        try (Connection c = ds.getConnection()) {
            designRelease(c, kind, DESIGN_TABLE, name, owner, designAcquire(c, kind, DESIGN_TABLE, name, owner));
        }
    }

    /** The design's acquire on {@code table}: one upsert; returns the token granted. */
    public static long designAcquire(Connection c, TestDatabase.Kind kind, String table, String name, String owner)
            throws SQLException {
        String acquire = switch (kind) {
            case POSTGRESQL ->
                "INSERT INTO " + table + " AS l (name, owner, token, acquired_at, expires_at)"
                        + " VALUES (?, ?, 1, clock_timestamp(), clock_timestamp() + ? * interval '1 microsecond')"
                        + " ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, token = l.token + 1,"
                        + " acquired_at = EXCLUDED.acquired_at, expires_at = EXCLUDED.expires_at"
                        + " WHERE l.expires_at <= EXCLUDED.acquired_at RETURNING l.token, l.owner";
            case MARIADB ->
                "INSERT INTO " + table + " (name, owner, token, acquired_at, expires_at)"
                        + " VALUES (?, ?, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)"
                        + " ON DUPLICATE KEY UPDATE token = IF(expires_at <= UTC_TIMESTAMP(6), token + 1, token),"
                        + " owner = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(owner), owner),"
                        + " acquired_at = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(acquired_at), acquired_at),"
                        + " expires_at = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(expires_at), expires_at)"
                        + " RETURNING token, owner";
            case H2 ->
                "SELECT token, owner FROM FINAL TABLE (MERGE INTO " + table + " t USING (SELECT"
                        + " CAST(? AS VARCHAR) AS name, CAST(? AS VARCHAR) AS owner, CURRENT_TIMESTAMP(6) AS now,"
                        + " CAST(? AS BIGINT) AS ttl) s ON t.name = s.name"
                        + " WHEN MATCHED AND t.expires_at <= s.now THEN UPDATE SET owner = s.owner, token = t.token + 1,"
                        + " acquired_at = s.now, expires_at = DATEADD(MICROSECOND, s.ttl, s.now)"
                        + " WHEN NOT MATCHED THEN INSERT (name, owner, token, acquired_at, expires_at)"
                        + " VALUES (s.name, s.owner, 1, s.now, DATEADD(MICROSECOND, s.ttl, s.now)))";
        };
        try (PreparedStatement ps = c.prepareStatement(acquire)) {
            ps.setString(1, name);
            ps.setString(2, owner);
            ps.setLong(3, TTL.toNanos() / 1000);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next() || !owner.equals(rs.getString(2))) {
                    throw new IllegalStateException("not granted: " + name);
                }
                return rs.getLong(1);
            }
        }
    }

    /** The design's release on {@code table}: one update that ends the live grant of {@code token}. */
    public static void designRelease(
            Connection c, TestDatabase.Kind kind, String table, String name, String owner, long token)
            throws SQLException {
        String now = switch (kind) {
            case POSTGRESQL -> "clock_timestamp()";
            case MARIADB -> "UTC_TIMESTAMP(6)";
            case H2 -> "CURRENT_TIMESTAMP(6)";
        };
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + table + " SET expires_at = acquired_at"
                + " WHERE name = ? AND owner = ? AND token = ? AND expires_at > " + now)) {
            ps.setString(1, name);
            ps.setString(2, owner);
            ps.setLong(3, token);
            if (ps.executeUpdate() != 1) {
                throw new IllegalStateException("not released: " + name);
            }
        }
    }

    /** Two single-row updates, each its own commit; with {@code fastSecond}, the second skips the flush (PostgreSQL). */
    private static void limitPair(DataSource ds, int t, boolean fastSecond) throws SQLException {
        String update = limitUpdate(LeasePeers.LIMIT_TABLE);
        try (Connection c = ds.getConnection();
                PreparedStatement durable = c.prepareStatement(update);
                PreparedStatement second = fastSecond
                        ? c.prepareStatement(update + " RETURNING set_config('synchronous_commit', 'off', true)")
                        : durable) {
            durable.setInt(1, t * 2);
            durable.executeUpdate();
            second.setInt(1, t * 2 + 1);
            second.execute();
        }
    }

    /** The limit's single-row update of counter {@code id} in {@code table}: one commit in auto-commit. */
    static String limitUpdate(String table) {
        return "UPDATE " + table + " SET v = v + 1 WHERE id = ?";
    }

    private static void write(
            String database,
            int threads,
            int rounds,
            long blockMillis,
            Map<String, List<Double>> rates,
            Map<String, double[]> perPair,
            Map<String, List<Double>> busyPerPair,
            Map<String, List<Double>> clientPerPair,
            Path out)
            throws Exception {
        double base = Interleaved.median(rates.get("oneStatement"));
        StringBuilder json = new StringBuilder(String.format(
                Locale.ROOT,
                "{\n  \"database\": \"%s\", \"threads\": %d,"
                        + " \"rounds\": %d, \"blockMillis\": %d, \"baseline\": \"oneStatement\",\n  \"results\": [\n",
                database,
                threads,
                rounds,
                blockMillis));
        List<String> names = new ArrayList<>(rates.keySet());
        for (int k = 0; k < names.size(); k++) {
            String name = names.get(k);
            double median = Interleaved.median(rates.get(name));
            double[] counts = perPair.get(name);
            double busy = Interleaved.median(busyPerPair.get(name));
            double client = Interleaved.median(clientPerPair.get(name));
            System.out.printf(
                    Locale.ROOT,
                    "%s %d threads %-24s median %7.0f pairs/s, ratio %.3f; %.2f round trips,"
                            + " %.2f statements per pair (one thread), %.2f round trips per pair under load;"
                            + " CPU per pair %.0f us (%.0f us in this JVM); a connection held %.0f us per pair%n",
                    database,
                    threads,
                    name,
                    median,
                    median / base,
                    counts[0],
                    counts[1],
                    counts[2],
                    busy,
                    client,
                    counts[3]);
            json.append(String.format(
                    Locale.ROOT,
                    "    {\"implementation\": \"%s\", \"medianPairsPerSecond\": %.1f,"
                            + " \"ratioToOneStatement\": %.3f, \"roundTripsPerPair\": %.2f, \"statementsPerPair\": %.2f,"
                            + " \"roundTripsPerPairUnderLoad\": %.2f, \"cpuMicrosPerPair\": %.1f,"
                            + " \"clientCpuMicrosPerPair\": %.1f, \"connectionHeldMicrosPerPair\": %.1f, \"blocks\": %s}%s\n",
                    name,
                    median,
                    median / base,
                    counts[0],
                    counts[1],
                    counts[2],
                    busy,
                    client,
                    counts[3],
                    rates.get(name).stream()
                            .map(r -> String.format(Locale.ROOT, "%.1f", r))
                            .toList(),
                    k + 1 < names.size() ? "," : ""));
        }
        json.append("  ]\n}\n");
        Files.writeString(out, json);
    }
}
