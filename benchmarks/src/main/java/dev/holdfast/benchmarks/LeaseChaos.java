package dev.holdfast.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.lease.FencedUpdate;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseNotHeldException;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.lease.LeaseTimeoutException;
import dev.holdfast.testing.TestDatabase;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * Chaos with four workers sharing ONE service (one pool): what a caller's release suffers from
 * batching. The workers (each its own owner; even ones spin on {@code tryAcquire} with a back-off of
 * up to 1 ms, odd ones block in {@code acquire} for up to 5 s, as the core's {@code LeaseStressTest})
 * take one of two names with 300 ms leases, claim the name's resource row with the token, read its
 * counter and write counter + 1, both through {@link FencedUpdate}, then release. Every 2 s the next
 * section pauses past the TTL (300 + 30 + up to 50 ms), so a run of 30 s injects about 15 pauses
 * whatever its throughput.
 *
 * <p>Counted: grants, injected pauses, failed releases ({@link LeaseNotHeldException}), and of those
 * the ones whose release was called while the lease was still live by the clock (client and databases
 * share this machine's): a lease that expired while its release waited, with the time it had left at
 * the call, the time the release took and how much of it went to borrowing connections and to
 * executing statements (a release called 2 ms before expiry that took a p99 release's
 * time fails whatever batching does). Where a release never waits for a batch, failed releases equal
 * the injected pauses. Also the release's own time (p50, p99,
 * max), and an independent check from what the workers saw and the final rows: the accepted writes
 * of a name are 1..N with tokens never going down (no stale write accepted), the counter is N, and in
 * token order a name's grants are unique and begin in that order.
 */
final class LeaseChaos {

    static final Duration TTL = Duration.ofMillis(300);
    static final int WORKERS = 4;
    static final String TABLE = "holdfast_bench_wl_chaos";
    static final String RESOURCE = "holdfast_bench_wl_chaos_res";
    static final long PAUSE_EVERY_NANOS = Duration.ofSeconds(2).toNanos();
    private static final String[] NAMES = {"alpha", "beta"};

    private record Grant(String name, long token, Instant acquiredAt) {}

    private record Write(String name, long token, long value) {}

    /**
     * A release that failed although called while its lease was live: the ms its lease had left at the call, the
     * ms the release took, and of that the ms spent borrowing connections and executing statements.
     */
    record LateRelease(double leftMs, double tookMs, double borrowingMs, double executingMs) {

        String text() {
            return String.format(Locale.ROOT, "%.1f / %.1f / %.1f / %.1f", leftMs, tookMs, borrowingMs, executingMs);
        }

        String json() {
            return String.format(Locale.ROOT, "[%.2f, %.2f, %.2f, %.2f]", leftMs, tookMs, borrowingMs, executingMs);
        }
    }

    /** One run's counts; {@code load} is the 1-minute load average before and after. */
    record Result(
            String database,
            String variant,
            String batching,
            long seconds,
            long grants,
            long timeouts,
            long pauses,
            long releaseFailures,
            List<LateRelease> expiredWhileReleasing,
            long refusedClaims,
            long refusedWrites,
            long staleAccepted,
            long lostOrDuplicated,
            long tokenDisorder,
            double[] releaseMillis,
            double[] load) {

        static final String MARKDOWN_HEADER =
                "| chaos, 4 workers, one service, 300 ms leases | s | grants | injected pauses |"
                        + " failed releases | of those, expired while the release waited | release p50 / p99 / max ms | lock timeouts |"
                        + " stale writes accepted | lost/duplicated | token disorder | load |\n|---|---|---|---|---|---|---|---|---|---|---|---|";

        /** The count of late releases, and each one's times ({@link LateRelease}). */
        String expired() {
            return expiredWhileReleasing.isEmpty()
                    ? "0"
                    : expiredWhileReleasing.size() + " (left / took / of that borrowing / executing ms: "
                            + expiredWhileReleasing.stream()
                                    .map(LateRelease::text)
                                    .collect(Collectors.joining(", ")) + ")";
        }

        String markdownRow() {
            return String.format(
                    Locale.ROOT,
                    "| %s, %s | %d | %d | %d | %d | %s | %.2f / %.2f / %.1f | %d | %d | %d | %d | %.1f → %.1f |",
                    database,
                    variant,
                    seconds,
                    grants,
                    pauses,
                    releaseFailures,
                    expired(),
                    releaseMillis[0],
                    releaseMillis[1],
                    releaseMillis[2],
                    timeouts,
                    staleAccepted,
                    lostOrDuplicated,
                    tokenDisorder,
                    load[0],
                    load[1]);
        }

        String line() {
            return String.format(
                    Locale.ROOT,
                    "chaos %s %s (%s): %d s, %d grants, %d pauses, %d failed releases, %s expired"
                            + " while the release waited, release p50/p99/max %.2f/%.2f/%.1f ms, %d lock timeouts, refused"
                            + " claims %d writes %d, stale writes accepted %d, lost/duplicated %d, token disorder %d (load %.2f → %.2f)",
                    database,
                    variant,
                    batching,
                    seconds,
                    grants,
                    pauses,
                    releaseFailures,
                    expired(),
                    releaseMillis[0],
                    releaseMillis[1],
                    releaseMillis[2],
                    timeouts,
                    refusedClaims,
                    refusedWrites,
                    staleAccepted,
                    lostOrDuplicated,
                    tokenDisorder,
                    load[0],
                    load[1]);
        }

        String json() {
            return String.format(
                    Locale.ROOT,
                    "{\"database\": \"%s\", \"variant\": \"%s\", \"batching\": \"%s\", \"seconds\": %d,"
                            + " \"grants\": %d, \"lockTimeouts\": %d, \"injectedPauses\": %d, \"releaseFailures\": %d,"
                            + " \"expiredWhileReleasing\": %d, \"expiredWhileReleasingLeftTookBorrowingExecutingMs\": %s, \"refusedClaims\": %d, \"refusedWrites\": %d, \"staleWritesAccepted\": %d,"
                            + " \"lostOrDuplicated\": %d, \"tokenDisorder\": %d, \"releaseP50Ms\": %s, \"releaseP99Ms\": %s,"
                            + " \"releaseMaxMs\": %s, \"loadBefore\": %s, \"loadAfter\": %s}",
                    database,
                    variant,
                    batching,
                    seconds,
                    grants,
                    timeouts,
                    pauses,
                    releaseFailures,
                    expiredWhileReleasing.size(),
                    expiredWhileReleasing.stream().map(LateRelease::json).collect(Collectors.joining(", ", "[", "]")),
                    refusedClaims,
                    refusedWrites,
                    staleAccepted,
                    lostOrDuplicated,
                    tokenDisorder,
                    Interleaved.jsonNumber(releaseMillis[0]),
                    Interleaved.jsonNumber(releaseMillis[1]),
                    Interleaved.jsonNumber(releaseMillis[2]),
                    Interleaved.jsonNumber(load[0]),
                    Interleaved.jsonNumber(load[1]));
        }
    }

    private LeaseChaos() {}

    static Result run(TestDatabase.Kind kind, BuilderVariants.Variant variant, Duration length) throws Exception {
        double loadBefore = MachineCpu.loadAverage();
        try (HikariDataSource pool = kind.newPool("wl-chaos-" + variant.label(), 2 * WORKERS + 2)) {
            LeasePeers.execute(
                    pool,
                    "DROP TABLE IF EXISTS " + TABLE,
                    "DROP TABLE IF EXISTS " + TABLE + "_queue",
                    "DROP TABLE IF EXISTS " + RESOURCE,
                    "CREATE TABLE " + RESOURCE + " (name VARCHAR(50) PRIMARY KEY, val BIGINT NOT NULL,"
                            + " holder VARCHAR(50), fence BIGINT)");
            new SchemaInstaller(pool).install(HoldfastTable.LEASES, TABLE);
            for (String name : NAMES) {
                LeasePeers.execute(pool, "INSERT INTO " + RESOURCE + " (name, val) VALUES ('" + name + "', 0)");
            }
            LeaseService service = variant.configure()
                    .apply(LeaseService.builder(timingDatabaseCalls(pool)).table(TABLE))
                    .build();
            FencedUpdate claim = FencedUpdate.of(RESOURCE, "name", "fence", "holder");
            FencedUpdate write = FencedUpdate.of(RESOURCE, "name", "fence", "val", "holder");
            AtomicLong grants = new AtomicLong();
            AtomicLong timeouts = new AtomicLong();
            AtomicLong pauses = new AtomicLong();
            AtomicLong releaseFailures = new AtomicLong();
            Queue<LateRelease> expiredWhileReleasing = new ConcurrentLinkedQueue<>();
            AtomicLong refusedClaims = new AtomicLong();
            AtomicLong refusedWrites = new AtomicLong();
            Queue<Grant> allGrants = new ConcurrentLinkedQueue<>();
            Queue<Write> accepted = new ConcurrentLinkedQueue<>();
            Queue<Long> releaseNanos = new ConcurrentLinkedQueue<>();
            List<Throwable> failures = new ArrayList<>();
            long start = System.nanoTime();
            long deadline = start + length.toNanos();
            AtomicLong nextPause = new AtomicLong(start + PAUSE_EVERY_NANOS);
            List<Thread> workers = new ArrayList<>();
            try {
                for (int w = 0; w < WORKERS; w++) {
                    int worker = w;
                    String owner = "chaos-" + variant.label() + "-" + w;
                    workers.add(new Thread(
                            () -> {
                                ThreadLocalRandom random = ThreadLocalRandom.current();
                                try {
                                    while (System.nanoTime() - deadline < 0) {
                                        String name = NAMES[random.nextInt(NAMES.length)];
                                        Lease lease;
                                        if (worker % 2 == 0) {
                                            Optional<Lease> granted = service.tryAcquire(name, owner, TTL);
                                            if (granted.isEmpty()) {
                                                LockSupport.parkNanos(
                                                        random.nextInt(1_000_000)); // the spinner's back-off
                                                continue;
                                            }
                                            lease = granted.get();
                                        } else {
                                            try {
                                                lease = service.acquire(name, owner, TTL, Duration.ofSeconds(5));
                                            } catch (LeaseTimeoutException e) {
                                                timeouts.incrementAndGet();
                                                continue;
                                            }
                                        }
                                        grants.incrementAndGet();
                                        allGrants.add(new Grant(name, lease.token(), lease.acquiredAt()));
                                        try (Connection c = pool.getConnection()) {
                                            if (!claim.update(c, lease.token(), name, owner)) {
                                                refusedClaims.incrementAndGet();
                                            } else {
                                                long value = counter(c, name);
                                                long now = System.nanoTime();
                                                long due = nextPause.get();
                                                if (now - due >= 0
                                                        && nextPause.compareAndSet(due, now + PAUSE_EVERY_NANOS)) {
                                                    pauses.incrementAndGet();
                                                    // A holder that stalls past its TTL (a GC pause): what the fence is
                                                    // for.
                                                    Thread.sleep(TTL.toMillis() + 30 + random.nextInt(50));
                                                }
                                                if (write.update(c, lease.token(), name, value + 1, owner)) {
                                                    accepted.add(new Write(name, lease.token(), value + 1));
                                                } else {
                                                    refusedWrites.incrementAndGet();
                                                }
                                            }
                                        }
                                        Instant calledAt = Instant.now();
                                        long[] database = DATABASE_NANOS.get();
                                        Arrays.fill(database, 0);
                                        long sent = System.nanoTime();
                                        boolean failed = false;
                                        try {
                                            service.release(lease);
                                        } catch (LeaseNotHeldException e) {
                                            failed = true;
                                        }
                                        long took = System.nanoTime() - sent;
                                        releaseNanos.add(took);
                                        if (failed) {
                                            releaseFailures.incrementAndGet();
                                            if (calledAt.isBefore(lease.expiresAt())) {
                                                expiredWhileReleasing.add(new LateRelease(
                                                        Duration.between(calledAt, lease.expiresAt())
                                                                                .toNanos()
                                                                        / 1e6,
                                                                took / 1e6,
                                                        database[0] / 1e6, database[1] / 1e6));
                                            }
                                        }
                                    }
                                } catch (Exception e) {
                                    synchronized (failures) {
                                        failures.add(e);
                                    }
                                }
                            },
                            "wl-chaos-" + variant.label() + "-" + w));
                }
                workers.forEach(Thread::start);
                for (Thread t : workers) {
                    t.join();
                }
            } finally {
                service.close();
            }
            if (!failures.isEmpty()) {
                failures.forEach(Throwable::printStackTrace);
                throw new IllegalStateException(failures.size() + " chaos workers failed");
            }
            long seconds = Math.round((System.nanoTime() - start) / 1e9);
            long[] checked = check(pool, allGrants, accepted);
            return new Result(
                    kind.id(),
                    variant.label(),
                    BuilderVariants.batchingOf(service),
                    seconds,
                    grants.get(),
                    timeouts.get(),
                    pauses.get(),
                    releaseFailures.get(),
                    List.copyOf(expiredWhileReleasing),
                    refusedClaims.get(),
                    refusedWrites.get(),
                    checked[0],
                    checked[1],
                    checked[2],
                    percentiles(releaseNanos),
                    new double[] {loadBefore, MachineCpu.loadAverage()});
        }
    }

    /**
     * Nanoseconds the calling thread spent, since it last set them to 0, in the service pool's {@code getConnection}
     * (index 0) and in executing statements on its connections (index 1).
     */
    private static final ThreadLocal<long[]> DATABASE_NANOS = ThreadLocal.withInitial(() -> new long[2]);

    /** {@code pool}, adding to {@link #DATABASE_NANOS} the time each thread borrows from it and executes on its connections. */
    private static DataSource timingDatabaseCalls(HikariDataSource pool) {
        return (DataSource) timed(pool, DataSource.class);
    }

    /** {@code target} as a {@code type} that times its calls; the connections and statements it returns are timed too. */
    private static Object timed(Object target, Class<?> type) {
        return Proxy.newProxyInstance(
                LeaseChaos.class.getClassLoader(), new Class<?>[] {type}, (proxy, method, args) -> {
                    String name = method.getName();
                    long start = System.nanoTime();
                    Object result;
                    try {
                        result = method.invoke(target, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    } finally {
                        if (name.equals("getConnection")) {
                            DATABASE_NANOS.get()[0] += System.nanoTime() - start;
                        } else if (name.startsWith("execute")) {
                            DATABASE_NANOS.get()[1] += System.nanoTime() - start;
                        }
                    }
                    Class<?> returned = method.getReturnType();
                    boolean timedToo = returned == Connection.class
                            || returned == PreparedStatement.class
                            || returned == Statement.class;
                    return result != null && timedToo ? timed(result, returned) : result;
                });
    }

    private static long counter(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT val FROM " + RESOURCE + " WHERE name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** Stale writes accepted, lost or duplicated updates (a counter that is not N counts too), token disorder. */
    private static long[] check(HikariDataSource pool, Queue<Grant> grants, Queue<Write> accepted) throws SQLException {
        long stale = 0;
        long lost = 0;
        long disorder = 0;
        try (Connection c = pool.getConnection()) {
            for (String name : NAMES) {
                List<Write> writes = accepted.stream()
                        .filter(x -> x.name().equals(name))
                        .sorted(Comparator.comparingLong(Write::value))
                        .toList();
                for (int i = 0; i < writes.size(); i++) {
                    if (writes.get(i).value() != i + 1) {
                        lost++;
                    }
                    if (i > 0 && writes.get(i).token() < writes.get(i - 1).token()) {
                        stale++;
                        System.out.println("STALE WRITE ACCEPTED: " + writes.get(i) + " after " + writes.get(i - 1));
                    }
                }
                if (counter(c, name) != writes.size()) {
                    lost++;
                }
                List<Grant> byToken = grants.stream()
                        .filter(g -> g.name().equals(name))
                        .sorted(Comparator.comparingLong(Grant::token))
                        .toList();
                for (int i = 1; i < byToken.size(); i++) {
                    if (byToken.get(i).token() == byToken.get(i - 1).token()
                            || byToken.get(i)
                                    .acquiredAt()
                                    .isBefore(byToken.get(i - 1).acquiredAt())) {
                        disorder++;
                        System.out.println("TOKEN DISORDER: " + byToken.get(i) + " after " + byToken.get(i - 1));
                    }
                }
            }
        }
        return new long[] {stale, lost, disorder};
    }

    /** p50, p99 and max in milliseconds. */
    private static double[] percentiles(Queue<Long> nanos) {
        long[] sorted = nanos.stream().mapToLong(Long::longValue).sorted().toArray();
        if (sorted.length == 0) {
            return new double[] {Double.NaN, Double.NaN, Double.NaN};
        }
        return new double[] {
            sorted[(int) (sorted.length * 0.50)] / 1e6,
            sorted[Math.min(sorted.length - 1, (int) (sorted.length * 0.99))] / 1e6,
            sorted[sorted.length - 1] / 1e6
        };
    }
}
