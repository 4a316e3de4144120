package dev.holdfast.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.jdbc.CommitDurability;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.testing.TestDatabase;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * Same-name contention across separate instances, as separate servers would have: 8 workers, each
 * with its own pool and its own lease service (or Spring Integration registry, or Redisson client),
 * and within one instance: 8 threads of one service on one pool ({@code holdfastOneInstance}: each
 * thread its own owner, so every hand-off goes through the database; {@code holdfastCohort}: one
 * owner, the instance's, with {@code cohortHandOffs(16)}), of one Spring Integration registry
 * ({@code springIntegrationOneInstance}) or of one Redisson client ({@code redissonOneInstance});
 * and ({@code holdfastCohortTwoInstances}) two instances of 4 threads each with cohort hand-off,
 * where the spread of acquisitions shows how fairly the instances share the lease;
 * loop "blocking acquire, hold 1 ms, release" on one name for 10 s after a warm-up of 15 s (system
 * property {@code warmup}, seconds). A warm-up of 2 s, the default before 2026-11-25, left the JIT
 * compiling during the measured seconds on two cores: it inflated every p99 (1.2–1.8 ms after 15 s
 * against 2.4–3.5 ms after 2 s, PostgreSQL), the more so where a listener sees fewer notifications.
 *
 * <p>Reported per implementation: acquisitions/s; hand-off latency between different workers, from
 * the moment the releasing worker <em>calls</em> release to the moment the next worker's acquire
 * returns (and, second figure, from the moment release <em>returns</em>), p50 and p99; database
 * statements (JDBC executes, counted by a proxy around each worker's pool) and commits per
 * acquisition; acquisitions per worker and the max/min spread; how often the releasing worker took
 * the lease straight back. Output: JSON to the file given as first argument. With {@code -DstatementsByText=true},
 * also, to standard error, how often each SQL text ran per grant while measured (which statements a grant costs).
 *
 * <p>Run: {@code flock /tmp/holdfast-bench.lock java -cp benchmarks/target/benchmarks.jar
 * dev.holdfast.benchmarks.LeaseHandoff benchmarks/results/lease-handoff.json}
 */
public final class LeaseHandoff {

    static final int WORKERS = Integer.getInteger("workers", 8);
    static final Duration HOLD = Duration.ofMillis(1);
    static final Duration WARMUP = Duration.ofSeconds(Long.getLong("warmup", 15));
    static final Duration MEASURE = Duration.ofSeconds(10);
    static final String NAME = "handoff";
    static final String TABLE = "holdfast_bench_lease_handoff";

    /** One worker's view of its lock implementation. */
    interface Instance extends AutoCloseable {
        void acquire() throws Exception;

        void release() throws Exception;

        @Override
        void close() throws Exception;
    }

    record Result(
            String implementation,
            String database,
            int workers,
            double seconds,
            long acquisitions,
            double acquisitionsPerSecond,
            double handoffP50Ms,
            double handoffP99Ms,
            double handoffFromReturnP50Ms,
            double handoffFromReturnP99Ms,
            Double statementsPerAcquisition,
            Double commitsPerAcquisition,
            long[] perWorker,
            Double spread,
            double sameWorkerReacquired,
            Integer longestServiceRun) {

        String json() {
            return String.format(
                    Locale.ROOT,
                    "{\"implementation\":\"%s\",\"database\":\"%s\",\"workers\":%d,"
                            + "\"seconds\":%.1f,\"acquisitions\":%d,\"acquisitionsPerSecond\":%.1f,"
                            + "\"handoffP50Ms\":%.3f,\"handoffP99Ms\":%.3f,\"handoffFromReleaseReturnP50Ms\":%.3f,"
                            + "\"handoffFromReleaseReturnP99Ms\":%.3f,\"statementsPerAcquisition\":%s,"
                            + "\"commitsPerAcquisition\":%s,\"acquisitionsPerWorker\":%s,\"maxMinSpread\":%s,"
                            + "\"sameWorkerReacquiredFraction\":%.3f,\"longestServiceRun\":%s}",
                    implementation,
                    database,
                    workers,
                    seconds,
                    acquisitions,
                    acquisitionsPerSecond,
                    handoffP50Ms,
                    handoffP99Ms,
                    handoffFromReturnP50Ms,
                    handoffFromReturnP99Ms,
                    statementsPerAcquisition == null
                            ? "null"
                            : String.format(Locale.ROOT, "%.3f", statementsPerAcquisition),
                    commitsPerAcquisition == null ? "null" : String.format(Locale.ROOT, "%.3f", commitsPerAcquisition),
                    Arrays.toString(perWorker),
                    spread == null ? "null" : String.format(Locale.ROOT, "%.3f", spread),
                    sameWorkerReacquired,
                    longestServiceRun == null ? "null" : longestServiceRun.toString());
        }
    }

    /**
     * Counts JDBC executes (round trips), the SQL statements they carried (a multi-statement text
     * counts each) and commits through every connection of a data source.
     */
    static final class Counting {
        final AtomicLong statements = new AtomicLong();
        final AtomicLong sqlStatements = new AtomicLong();
        final AtomicLong commits = new AtomicLong();
        /** Nanoseconds connections were held, from getConnection to close, summed. */
        final AtomicLong heldNanos = new AtomicLong();

        /** Executes per SQL text, kept only with {@code -DstatementsByText=true} (the breakdown {@link #printByText} prints). */
        final java.util.Map<String, java.util.concurrent.atomic.LongAdder> byText =
                Boolean.getBoolean("statementsByText") ? new java.util.concurrent.ConcurrentHashMap<>() : null;

        DataSource wrap(DataSource target) {
            return (DataSource) proxy(target, DataSource.class, null);
        }

        /** A snapshot of {@link #byText}, or null when it is not kept. */
        java.util.Map<String, Long> byTextNow() {
            if (byText == null) {
                return null;
            }
            java.util.Map<String, Long> now = new java.util.HashMap<>();
            byText.forEach((text, count) -> now.put(text, count.sum()));
            return now;
        }

        /** Prints to standard error, per SQL text (its start), how many times it ran per grant between two snapshots. */
        static void printByText(
                String implementation,
                java.util.Map<String, Long> start,
                java.util.Map<String, Long> end,
                long grants) {
            if (start == null || end == null || grants == 0) {
                return;
            }
            end.entrySet().stream()
                    .map(e -> java.util.Map.entry(e.getKey(), e.getValue() - start.getOrDefault(e.getKey(), 0L)))
                    .filter(e -> e.getValue() > 0)
                    .sorted(java.util.Map.Entry.<String, Long>comparingByValue().reversed())
                    .forEach(e -> System.err.printf(
                            Locale.ROOT,
                            "%s per grant %6.3f  %s%n",
                            implementation,
                            e.getValue() / (double) grants,
                            e.getKey().substring(0, Math.min(140, e.getKey().length()))));
        }

        /** Statements per SQL text, counted once: a regular expression over every text taxed long statements. */
        private static final java.util.Map<String, Integer> COUNTS = new java.util.concurrent.ConcurrentHashMap<>();

        private static int count(Object sql) {
            return sql instanceof String text ? COUNTS.computeIfAbsent(text, t -> t.split(";\\s*(?=\\S)").length) : 0;
        }

        private Object proxy(Object target, Class<?> type, String preparedSql) {
            long opened = System.nanoTime();
            return Proxy.newProxyInstance(
                    LeaseHandoff.class.getClassLoader(), new Class<?>[] {type}, (p, method, args) -> {
                        String m = method.getName();
                        if (type == Connection.class && m.equals("close")) {
                            heldNanos.addAndGet(System.nanoTime() - opened);
                        }
                        if (m.startsWith("execute")) {
                            statements.incrementAndGet();
                            Object sql = args != null && args.length > 0 ? args[0] : preparedSql;
                            sqlStatements.addAndGet(count(sql));
                            if (byText != null && sql instanceof String text) {
                                byText.computeIfAbsent(text, k -> new java.util.concurrent.atomic.LongAdder())
                                        .increment();
                            }
                        } else if (m.equals("commit")) {
                            commits.incrementAndGet();
                        }
                        Object result;
                        try {
                            result = method.invoke(target, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                        // Only what the application asks for is wrapped; unwrap() must reach the driver.
                        if (m.equals("getConnection")) {
                            return proxy(result, Connection.class, null);
                        }
                        if (m.equals("prepareStatement") || m.equals("prepareCall")) {
                            return proxy(result, java.sql.PreparedStatement.class, (String) args[0]);
                        }
                        if (m.equals("createStatement")) {
                            return proxy(result, Statement.class, null);
                        }
                        return result;
                    });
        }
    }

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args.length > 0 ? args[0] : "benchmarks/results/lease-handoff.json");
        List<String> only = args.length > 1 ? List.of(args[1].split(",")) : List.of();
        List<Result> results = new ArrayList<>();
        List<String> extra = new ArrayList<>();
        for (String[] run : new String[][] {
            {"holdfast", "postgresql"},
            {"holdfastDurableRelease", "postgresql"},
            {"springIntegration", "postgresql"},
            {"redisson", "redis"},
            {"holdfast", "mariadb"},
            {"holdfastPolling", "mariadb"},
            {"springIntegration", "mariadb"},
            {"bareRing", "mariadb"},
            {"bareKill", "mariadb"},
            {"holdfast", "h2"},
            {"holdfastOneInstance", "postgresql"},
            {"holdfastOneInstance", "mariadb"},
            {"holdfastOneInstance", "h2"},
            {"holdfastCohort", "postgresql"},
            {"holdfastCohort", "mariadb"},
            {"holdfastCohort", "h2"},
            {"holdfastCohortTwoInstances", "postgresql"},
            {"holdfastCohortTwoInstances", "mariadb"},
            {"springIntegrationOneInstance", "postgresql"},
            {"redissonOneInstance", "redis"}
        }) {
            if (!only.isEmpty() && !only.contains(run[0] + "@" + run[1])) {
                continue;
            }
            Result r = run(run[0], run[1]);
            System.out.println(r.json());
            results.add(r);
        }
        if (only.isEmpty() || only.contains("notifyFloor@postgresql")) {
            for (boolean skipPeek : new boolean[] {false, true}) {
                String floor = notifyFloor(skipPeek);
                System.out.println(floor);
                extra.add(floor);
            }
        }
        if (only.isEmpty() || only.contains("commitFloor@postgresql")) {
            String floor = commitFloor();
            System.out.println(floor);
            extra.add(floor);
        }
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(
                out,
                java.util.stream.Stream.concat(
                                results.stream()
                                        .filter(java.util.Objects::nonNull)
                                        .map(Result::json),
                                extra.stream())
                        .collect(Collectors.joining(",\n  ", "[\n  ", "\n]\n")));
    }

    /**
     * The floor under any NOTIFY-based hand-off on this machine: from the moment one connection
     * sends {@code NOTIFY} (auto-commit) to the moment another, blocked in {@code getNotifications},
     * has it. 400 notifications, 5 ms apart. With {@code skipPeek}, pgjdbc's trailing 1 ms "more
     * pending?" read is skipped as the lease listener does (see {@code PgWakeUps.StreamPeek}).
     */
    static String notifyFloor(boolean skipPeek) throws Exception {
        TestDatabase.Kind kind = TestDatabase.Kind.POSTGRESQL;
        try (HikariDataSource pool = kind.newPool("bench-notify-floor", 2);
                Connection listener = pool.getConnection();
                Connection sender = pool.getConnection()) {
            try (Statement s = listener.createStatement()) {
                s.execute("LISTEN holdfast_bench_lease_floor");
            }
            org.postgresql.PGConnection pg = listener.unwrap(org.postgresql.PGConnection.class);
            if (skipPeek) {
                NotifyFanout.peekAfter(pg, Long.MAX_VALUE);
            }
            int n = 400;
            long[] sent = new long[n];
            long[] latency = new long[n];
            Thread reader = new Thread(() -> {
                try {
                    int received = 0;
                    while (received < n) {
                        org.postgresql.PGNotification[] notes = pg.getNotifications(1000);
                        long now = System.nanoTime();
                        if (notes != null) {
                            for (org.postgresql.PGNotification note : notes) {
                                int i = Integer.parseInt(note.getParameter());
                                latency[i] = now - sent[i];
                                received++;
                            }
                        }
                    }
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
            reader.start();
            try (java.sql.PreparedStatement ps =
                    sender.prepareStatement("SELECT pg_notify('holdfast_bench_lease_floor', ?)")) {
                for (int i = 0; i < n; i++) {
                    ps.setString(1, Integer.toString(i));
                    sent[i] = System.nanoTime();
                    ps.executeQuery().close();
                    Thread.sleep(5);
                }
            }
            reader.join(10_000);
            if (skipPeek) {
                NotifyFanout.peekAfter(pg, 0L);
            }
            try (Statement s = listener.createStatement()) {
                s.execute("UNLISTEN *");
            }
            Arrays.sort(latency);
            return String.format(
                    Locale.ROOT,
                    "{\"implementation\":\"notifyFloor%s\",\"database\":\"postgresql\","
                            + "\"notifications\":%d,\"notifyDeliveryP50Ms\":%.3f,\"notifyDeliveryP99Ms\":%.3f}",
                    skipPeek ? "WithoutDriverPeek" : "PgjdbcDefault",
                    n,
                    percentile(latency, 0.5),
                    percentile(latency, 0.99));
        }
    }

    /**
     * The other floor under a hand-off across instances: one durable commit (the release's, which
     * grants the lease to the waiter), seen from the client. 400 single-row auto-commit updates,
     * 5 ms apart as in {@link #notifyFloor}: a round trip and the WAL flush, with nobody to share it.
     */
    static String commitFloor() throws Exception {
        try (HikariDataSource pool = TestDatabase.Kind.POSTGRESQL.newPool("bench-commit-floor", 1);
                Connection c = pool.getConnection()) {
            try (Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS holdfast_bench_commit_floor");
                s.execute("CREATE TABLE holdfast_bench_commit_floor (id INT PRIMARY KEY, v BIGINT NOT NULL)");
                s.execute("INSERT INTO holdfast_bench_commit_floor VALUES (1, 0)");
            }
            int n = 400;
            long[] latency = new long[n];
            try (java.sql.PreparedStatement ps =
                    c.prepareStatement("UPDATE holdfast_bench_commit_floor SET v = v + 1 WHERE id = 1")) {
                for (int i = 0; i < n; i++) {
                    long start = System.nanoTime();
                    ps.executeUpdate();
                    latency[i] = System.nanoTime() - start;
                    Thread.sleep(5);
                }
            }
            try (Statement s = c.createStatement()) {
                s.execute("DROP TABLE holdfast_bench_commit_floor");
            }
            Arrays.sort(latency);
            return String.format(
                    Locale.ROOT,
                    "{\"implementation\":\"commitFloor\",\"database\":\"postgresql\","
                            + "\"commits\":%d,\"durableCommitP50Ms\":%.3f,\"durableCommitP99Ms\":%.3f}",
                    n,
                    percentile(latency, 0.5),
                    percentile(latency, 0.99));
        }
    }

    static Result run(String implementation, String database) throws Exception {
        Counting counting = new Counting();
        List<AutoCloseable> cleanup = new ArrayList<>();
        List<Instance> instances = new ArrayList<>();
        TestDatabase.Kind kind =
                database.equals("redis") ? null : TestDatabase.Kind.valueOf(database.toUpperCase(Locale.ROOT));
        HikariDataSource admin = kind == null ? null : kind.newPool("bench-handoff-admin", 2);
        try {
            if (implementation.startsWith("holdfast")) {
                LeasePeers.execute(admin, "DROP TABLE IF EXISTS " + TABLE, "DROP TABLE IF EXISTS " + TABLE + "_queue");
                new SchemaInstaller(admin).install(HoldfastTable.LEASES, TABLE);
            } else if (implementation.startsWith("springIntegration")) {
                LeasePeers.createSpringIntegrationTable(admin, kind);
            }
            // Within one instance: every worker is a thread of one service, on one pool.
            LeaseService shared = null;
            if (implementation.equals("holdfastOneInstance") || implementation.equals("holdfastCohort")) {
                HikariDataSource pool = kind.newPool("bench-handoff-shared", WORKERS * 2 + 1);
                shared = LeaseService.builder(counting.wrap(pool))
                        .table(TABLE)
                        .cohortHandOffs(implementation.equals("holdfastCohort") ? COHORT_BOUND : 0)
                        .build();
                LeaseService service = shared;
                cleanup.add(() -> {
                    service.close();
                    pool.close();
                });
            }
            List<LeaseService> cohorts = new ArrayList<>();
            if (implementation.equals("holdfastCohortTwoInstances")) {
                for (int i = 0; i < 2; i++) {
                    HikariDataSource pool = kind.newPool("bench-handoff-instance-" + i, WORKERS + 1);
                    LeaseService service = LeaseService.builder(counting.wrap(pool))
                            .table(TABLE)
                            .cohortHandOffs(COHORT_BOUND)
                            .build();
                    cohorts.add(service);
                    cleanup.add(() -> {
                        service.close();
                        pool.close();
                    });
                }
            }
            Lock sharedLock = null;
            if (implementation.equals("springIntegrationOneInstance")) {
                HikariDataSource pool = kind.newPool("bench-handoff-shared", WORKERS * 2 + 1);
                sharedLock = LeasePeers.springIntegration(counting.wrap(pool)).obtain(NAME);
                cleanup.add(pool::close);
            } else if (implementation.equals("redissonOneInstance")) {
                RedissonClient client = redisson(WORKERS * 2);
                sharedLock = client.getLock("holdfast-bench-lease-" + NAME);
                cleanup.add(client::shutdown);
            }
            if (implementation.equals("bareRing")) {
                for (BareHandOffRing.Worker worker : BareHandOffRing.workers(kind, admin, WORKERS, counting::wrap)) {
                    instances.add(instance(worker::acquire, worker::release, worker));
                }
            }
            if (implementation.equals("bareKill")) {
                for (BareKillQueue.Worker worker : BareKillQueue.workers(kind, admin, WORKERS, counting::wrap)) {
                    instances.add(instance(worker::acquire, worker::release, worker));
                }
            }
            for (int w = 0; w < WORKERS && !implementation.startsWith("bare"); w++) {
                String owner = "worker-" + w;
                switch (implementation) {
                    case "holdfastOneInstance" ->
                        instances.add(holdfast(shared, owner, () -> {
                            // the shared service closes with the run
                        }));
                    case "holdfastCohort" ->
                        instances.add(holdfast(shared, "instance", () -> {
                            // the shared service closes with the run
                        }));
                    case "holdfastCohortTwoInstances" ->
                        instances.add(holdfast(cohorts.get(w % 2), "instance-" + w % 2, () -> {
                            // the instance's service closes with the run
                        }));
                    case "springIntegrationOneInstance", "redissonOneInstance" ->
                        instances.add(lock(sharedLock, () -> {
                            // the shared registry or client closes with the run
                        }));
                    case "holdfast", "holdfastDurableRelease", "holdfastPolling" -> {
                        HikariDataSource pool = kind.newPool("bench-handoff-" + w, INSTANCE_POOL);
                        // holdfastPolling: MariaDB waiters poll, as before release-woken waiters (the yardstick)
                        LeaseService leases = LeaseInternals.tune(
                                        LeaseService.builder(counting.wrap(pool))
                                                .table(TABLE),
                                        t -> t.wakeUps(!implementation.equals("holdfastPolling")))
                                .durability(
                                        implementation.equals("holdfastDurableRelease")
                                                ? CommitDurability.DURABLE
                                                : CommitDurability.RELAXED)
                                .build();
                        instances.add(holdfast(leases, owner, () -> {
                            leases.close();
                            pool.close();
                        }));
                    }
                    case "springIntegration" -> {
                        HikariDataSource pool = kind.newPool("bench-handoff-" + w, INSTANCE_POOL);
                        JdbcLockRegistry registry = LeasePeers.springIntegration(counting.wrap(pool));
                        instances.add(lock(registry.obtain(NAME), pool::close));
                    }
                    case "redisson" -> {
                        RedissonClient client = redisson(4);
                        instances.add(lock(client.getLock("holdfast-bench-lease-" + NAME), client::shutdown));
                    }
                    default -> throw new IllegalArgumentException(implementation);
                }
            }
            return measure(
                    implementation,
                    database,
                    instances,
                    counting,
                    implementation.startsWith("redisson"),
                    implementation.equals("holdfastCohortTwoInstances") ? 2 : 1);
        } finally {
            for (Instance i : instances) {
                i.close();
            }
            for (AutoCloseable c : cleanup) {
                c.close();
            }
            if (admin != null) {
                if (implementation.startsWith("holdfast")) {
                    LeasePeers.execute(
                            admin, "DROP TABLE IF EXISTS " + TABLE, "DROP TABLE IF EXISTS " + TABLE + "_queue");
                } else if (implementation.startsWith("springIntegration")) {
                    LeasePeers.dropSpringIntegrationTable(admin);
                } else if (implementation.equals("bareRing")) {
                    LeasePeers.execute(admin, "DROP TABLE IF EXISTS " + BareHandOffRing.TABLE);
                } else if (implementation.equals("bareKill")) {
                    LeasePeers.execute(
                            admin,
                            "DROP TABLE IF EXISTS " + BareKillQueue.TABLE,
                            "DROP TABLE IF EXISTS " + BareKillQueue.TABLE + "_queue");
                }
                admin.close();
            }
        }
    }

    /**
     * Connections in each instance's own pool, Holdfast's and Spring Integration's alike: a Holdfast service on
     * MariaDB keeps two while its calls wait (its wake-up connection and the one holding its doorbell), beside
     * the worker's own.
     */
    static final int INSTANCE_POOL = 3;

    /** Cohort hand-offs of one database grant in {@code holdfastCohort}. */
    static final int COHORT_BOUND = 16;

    private static RedissonClient redisson(int connections) {
        Config config = new Config();
        config.useSingleServer()
                .setAddress("redis://127.0.0.1:6379")
                .setConnectionMinimumIdleSize(2)
                .setConnectionPoolSize(connections)
                .setSubscriptionConnectionMinimumIdleSize(1)
                .setSubscriptionConnectionPoolSize(2);
        return Redisson.create(config);
    }

    /**
     * A worker blocking on {@code lock} (Spring Integration's, or Redisson's with a 30 s lease);
     * {@code close} runs when the run ends.
     */
    /** A step of an {@link Instance}. */
    @FunctionalInterface
    interface Step {
        void run() throws Exception;
    }

    /** An instance made of its two steps and what closes it (the bare yardsticks' workers). */
    private static Instance instance(Step acquire, Step release, AutoCloseable close) {
        return new Instance() {
            public void acquire() throws Exception {
                acquire.run();
            }

            public void release() throws Exception {
                release.run();
            }

            public void close() throws Exception {
                close.close();
            }
        };
    }

    private static Instance lock(Lock lock, Runnable close) {
        return new Instance() {
            public void acquire() throws Exception {
                boolean locked = lock instanceof RLock r
                        ? r.tryLock(30, 30, TimeUnit.SECONDS)
                        : lock.tryLock(30, TimeUnit.SECONDS);
                if (!locked) {
                    throw new IllegalStateException("not acquired in 30 s");
                }
            }

            public void release() {
                lock.unlock();
            }

            public void close() {
                close.run();
            }
        };
    }

    /** A worker blocking on {@code leases} as {@code owner}; {@code close} runs when the run ends. */
    private static Instance holdfast(LeaseService leases, String owner, Runnable close) {
        AtomicReference<Lease> held = new AtomicReference<>();
        return new Instance() {
            public void acquire() throws Exception {
                held.set(leases.acquire(NAME, owner, Duration.ofSeconds(30), Duration.ofSeconds(30)));
            }

            public void release() {
                leases.release(held.get());
            }

            public void close() {
                close.run();
            }
        };
    }

    /** {worker, release call start, release return (0 while in flight)}. */
    record Release(int worker, long startNanos, long endNanos) {}

    /** @param services how many services the workers are spread over (worker {@code w} is in service {@code w % services}) */
    static Result measure(
            String implementation,
            String database,
            List<Instance> instances,
            Counting counting,
            boolean noStatements,
            int services)
            throws Exception {
        int n = instances.size();
        AtomicReference<Release> lastRelease = new AtomicReference<>();
        long[] perWorker = new long[n];
        List<List<long[]>> handoffs = new ArrayList<>();
        long[] same = new long[n];
        // Grants are exclusive, so appending while holding the lease records them in grant order.
        java.util.Queue<Integer> order = new java.util.concurrent.ConcurrentLinkedQueue<>();
        CountDownLatch start = new CountDownLatch(1);
        long warmupEnd = System.nanoTime() + WARMUP.toNanos() + 200_000_000L;
        long measureEnd = warmupEnd + MEASURE.toNanos();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long[] counterAtStart = new long[2];
        List<java.util.Map<String, Long>> byText = new ArrayList<>(java.util.Collections.nCopies(2, null));
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < n; w++) {
            int worker = w;
            List<long[]> mine = new ArrayList<>();
            handoffs.add(mine);
            Thread t = new Thread(
                    () -> {
                        Instance instance = instances.get(worker);
                        try {
                            start.await();
                            while (System.nanoTime() < measureEnd && failure.get() == null) {
                                instance.acquire();
                                long acquired = System.nanoTime();
                                Release previous = lastRelease.get();
                                boolean measured = acquired >= warmupEnd && acquired < measureEnd;
                                if (measured) {
                                    perWorker[worker]++;
                                    order.add(worker);
                                    if (previous != null && previous.worker() == worker) {
                                        same[worker]++;
                                    } else if (previous != null) {
                                        long fromEnd = previous.endNanos() == 0
                                                ? 0
                                                : Math.max(0, acquired - previous.endNanos());
                                        mine.add(new long[] {acquired - previous.startNanos(), fromEnd});
                                    }
                                }
                                java.util.concurrent.locks.LockSupport.parkNanos(HOLD.toNanos());
                                long releaseStart = System.nanoTime();
                                Release release = new Release(worker, releaseStart, 0);
                                lastRelease.set(release);
                                instance.release();
                                lastRelease.compareAndSet(
                                        release, new Release(worker, releaseStart, System.nanoTime()));
                            }
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                        }
                    },
                    "handoff-" + w);
            threads.add(t);
            t.start();
        }
        Thread sampler = new Thread(() -> {
            try {
                Thread.sleep(Math.max(0, TimeUnit.NANOSECONDS.toMillis(warmupEnd - System.nanoTime())));
            } catch (InterruptedException e) {
                return;
            }
            counterAtStart[0] = counting.statements.get();
            counterAtStart[1] = counting.commits.get();
            byText.set(0, counting.byTextNow());
        });
        sampler.start();
        start.countDown();
        long[] counterAtEnd = new long[2];
        Thread endSampler = new Thread(() -> {
            try {
                Thread.sleep(Math.max(0, TimeUnit.NANOSECONDS.toMillis(measureEnd - System.nanoTime())));
            } catch (InterruptedException e) {
                return;
            }
            counterAtEnd[0] = counting.statements.get();
            counterAtEnd[1] = counting.commits.get();
            byText.set(1, counting.byTextNow());
        });
        endSampler.start();
        for (Thread t : threads) {
            t.join();
        }
        sampler.join();
        endSampler.join();
        if (failure.get() != null) {
            throw new IllegalStateException(implementation + " on " + database + " failed", failure.get());
        }
        long total = Arrays.stream(perWorker).sum();
        Counting.printByText(implementation, byText.get(0), byText.get(1), total);
        long[] fromStart = handoffs.stream()
                .flatMap(List::stream)
                .mapToLong(x -> x[0])
                .sorted()
                .toArray();
        long[] fromEnd = handoffs.stream()
                .flatMap(List::stream)
                .mapToLong(x -> x[1])
                .sorted()
                .toArray();
        long min = Arrays.stream(perWorker).min().orElse(0);
        long max = Arrays.stream(perWorker).max().orElse(0);
        double seconds = MEASURE.toNanos() / 1e9;
        Double statements = noStatements ? null : (counterAtEnd[0] - counterAtStart[0]) / (double) total;
        Double commits = noStatements ? null : (counterAtEnd[1] - counterAtStart[1]) / (double) total;
        return new Result(
                implementation,
                database,
                n,
                seconds,
                total,
                total / seconds,
                percentile(fromStart, 0.50),
                percentile(fromStart, 0.99),
                percentile(fromEnd, 0.50),
                percentile(fromEnd, 0.99),
                statements,
                commits,
                perWorker,
                min == 0 ? null : max / (double) min,
                Arrays.stream(same).sum() / (double) total,
                services < 2 ? null : longestRun(order, services));
    }

    /** The most grants in a row that went to workers of one service. */
    static int longestRun(java.util.Queue<Integer> order, int services) {
        int longest = 0;
        int run = 0;
        int previous = -1;
        for (int worker : order) {
            int service = worker % services;
            run = service == previous ? run + 1 : 1;
            previous = service;
            longest = Math.max(longest, run);
        }
        return longest;
    }

    static double percentile(long[] sorted, double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int index = (int) Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1);
        return sorted[Math.max(0, index)] / 1e6;
    }

    private LeaseHandoff() {}
}
