package dev.holdfast.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.testing.TestDatabase;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Batched commits by how many statements of a kind may be in flight, against batching off: distinct
 * names (each thread its own 8), {@code tryAcquire} + {@code release}, the configurations alternating
 * in blocks ({@code rounds} rounds after one warm-up round, rotating which goes first); medians of the
 * per-block rates, the share of calls that went in multi-row statements and their mean size. Usage:
 * {@code java -cp benchmarks.jar dev.holdfast.benchmarks.LeaseBatchingInFlight <db> <threads> <rounds>
 * <blockMillis> off,4/4,1/1}: {@code N/M} is N statements of a kind in flight, another starting
 * once M calls are queued ({@code Batching.CONCURRENT}).
 */
public final class LeaseBatchingInFlight {
    /** System property {@code hold.micros}: how long each thread holds a lease before it releases it (default 0). */
    private static final long HOLD_NANOS = Long.getLong("hold.micros", 0) * 1000;

    public static void main(String[] args) throws Exception {
        TestDatabase.Kind kind = TestDatabase.Kind.valueOf(args[0].toUpperCase());
        int threads = Integer.parseInt(args[1]);
        int rounds = Integer.parseInt(args[2]);
        long millis = Long.parseLong(args[3]);
        String table = "holdfast_bench_batch_probe";
        Map<String, LeaseService> services = new LinkedHashMap<>();
        List<HikariDataSource> pools = new ArrayList<>();
        try (HikariDataSource admin = kind.newPool("probe-admin", 1)) {
            try (var c = admin.getConnection();
                    var s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS " + table);
                s.execute("DROP TABLE IF EXISTS " + table + "_queue");
            }
            new SchemaInstaller(admin).install(HoldfastTable.LEASES, table);
            for (String config : args[4].split(",")) {
                HikariDataSource pool = kind.newPool("probe-" + config, threads);
                pools.add(pool);
                LeaseService.Builder b = LeaseService.builder(pool).table(table);
                if (!config.equals("off")) {
                    String[] inFlight = config.split("/"); // N/M
                    int statements = Integer.parseInt(inFlight[0]);
                    int overlapAt = inFlight.length > 1 ? Integer.parseInt(inFlight[1]) : 1;
                    BatchingSettings.concurrent(b, statements, overlapAt);
                }
                services.put(config, b.build());
            }
            Map<String, List<Double>> rates = new LinkedHashMap<>();
            Map<String, long[]> calls = new LinkedHashMap<>();
            services.keySet().forEach(k -> {
                rates.put(k, new ArrayList<>());
                calls.put(k, new long[3]);
            });
            List<String> keys = new ArrayList<>(services.keySet());
            for (int round = -1; round < rounds; round++) {
                for (int k = 0; k < keys.size(); k++) {
                    String key = keys.get((k + Math.max(round, 0)) % keys.size());
                    LeaseService leases = services.get(key);
                    long batchedBefore = LeaseInternals.probe(leases).batchedCalls();
                    long statementsBefore = LeaseInternals.probe(leases).multiRowStatements();
                    long[] pairs = new long[1];
                    double rate = block(leases, threads, millis, key, pairs);
                    if (round >= 0) {
                        rates.get(key).add(rate);
                        calls.get(key)[0] += pairs[0];
                        calls.get(key)[1] += LeaseInternals.probe(leases).batchedCalls() - batchedBefore;
                        calls.get(key)[2] += LeaseInternals.probe(leases).multiRowStatements() - statementsBefore;
                    }
                }
            }
            for (String key : keys) {
                List<Double> r = new ArrayList<>(rates.get(key));
                r.sort(null);
                System.out.printf(
                        "%s %s threads=%d median %.0f pairs/s, batched calls %.2f of all, %.2f per multi-row statement%n",
                        kind,
                        key,
                        threads,
                        r.get(r.size() / 2),
                        calls.get(key)[1] / (2.0 * calls.get(key)[0]),
                        calls.get(key)[1] / Math.max(1.0, calls.get(key)[2]));
            }
        } finally {
            services.values().forEach(LeaseService::close);
            pools.forEach(HikariDataSource::close);
        }
    }

    private static double block(LeaseService leases, int threads, long millis, String prefix, long[] pairs)
            throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong done = new AtomicLong();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            workers.add(new Thread(() -> {
                int i = 0;
                while (!stop.get()) {
                    String name = prefix + "-" + thread + "-" + (i++ & 7);
                    Lease lease = leases.tryAcquire(name, "bench-" + thread, Duration.ofSeconds(60))
                            .orElseThrow();
                    if (HOLD_NANOS > 0) {
                        java.util.concurrent.locks.LockSupport.parkNanos(HOLD_NANOS); // work under the lease
                    }
                    leases.release(lease);
                    done.incrementAndGet();
                }
            }));
        }
        long start = System.nanoTime();
        workers.forEach(Thread::start);
        Thread.sleep(millis);
        stop.set(true);
        for (Thread w : workers) {
            w.join();
        }
        pairs[0] = done.get();
        return done.get() / ((System.nanoTime() - start) / 1e9);
    }
}
