package dev.holdfast.pessimistic.offline;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Concurrency of {@link JdbcLockManager}, checked independently of the database: every winner
 * claims an in-memory holder slot by compare-and-set and clears it before it releases, so two
 * live holders at once show up as a failed claim.
 */
class OfflineLockRaceTest {

    private static final int THREADS = 16;
    private static final int ROUNDS = 1_000;

    @DatabaseTest
    void sixteenThreadsRacingForOneResourceNeverHoldItTogether(TestDatabase db) throws Exception {
        OfflineLockFixture f = OfflineLockFixture.create(db);
        try (HikariDataSource pool = db.newPool(THREADS)) {
            JdbcLockManager locks = f.manager(pool, b -> b);
            AtomicReference<String> holder = new AtomicReference<>();
            LongAdder acquired = new LongAdder();
            LongAdder refused = new LongAdder();
            LongAdder refusedWithoutHolder = new LongAdder();
            LongAdder violations = new LongAdder();
            LongAdder checksFailed = new LongAdder();
            Map<String, LongAdder> unexpected = new ConcurrentHashMap<>();
            CyclicBarrier start = new CyclicBarrier(THREADS);
            ExecutorService executor = Executors.newFixedThreadPool(THREADS);
            long began = System.nanoTime();
            try {
                List<Future<?>> futures = new ArrayList<>();
                for (int t = 0; t < THREADS; t++) {
                    String me = "worker-" + t;
                    futures.add(executor.submit(() -> {
                        start.await();
                        for (int round = 0; round < ROUNDS; round++) {
                            try {
                                LockId lockId = locks.tryLock("order", "the-one", me);
                                acquired.increment();
                                if (!holder.compareAndSet(null, me)) {
                                    violations.increment();
                                }
                                try {
                                    locks.checkLock(lockId, "order", "the-one", me);
                                } catch (LockException e) {
                                    checksFailed.increment();
                                }
                                holder.compareAndSet(me, null);
                                locks.releaseLock(lockId, me);
                            } catch (AlreadyLockedException e) {
                                refused.increment();
                                if (e.owner().isEmpty() || e.expiresAt() == null) {
                                    refusedWithoutHolder.increment();
                                }
                            } catch (RuntimeException e) {
                                unexpected
                                        .computeIfAbsent(
                                                e.getClass().getSimpleName() + ": " + e.getMessage(),
                                                k -> new LongAdder())
                                        .increment();
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> future : futures) {
                    future.get(10, TimeUnit.MINUTES);
                }
            } finally {
                executor.shutdownNow();
            }
            double seconds = (System.nanoTime() - began) / 1e9;
            System.out.printf(
                    "[%s] offline race: %d threads x %d rounds in %.1f s: acquired=%d refused=%d"
                            + " violations=%d failedChecks=%d refusedWithoutHolder=%d retries=%d unexpected=%s%n",
                    db.id(),
                    THREADS,
                    ROUNDS,
                    seconds,
                    acquired.sum(),
                    refused.sum(),
                    violations.sum(),
                    checksFailed.sum(),
                    refusedWithoutHolder.sum(),
                    locks.retries(),
                    unexpected);

            assertThat(violations.sum()).as("two live holders at once").isZero();
            assertThat(checksFailed.sum()).as("a winner's own check failed").isZero();
            assertThat(unexpected).as("unexpected exceptions").isEmpty();
            assertThat(refusedWithoutHolder.sum())
                    .as("refusals that could not say who holds the lock")
                    .isZero();
            assertThat(acquired.sum() + refused.sum()).isEqualTo((long) THREADS * ROUNDS);
            assertThat(acquired.sum()).isPositive();
            assertThat(refused.sum()).as("the race really raced").isPositive();
            assertThat(f.count("lock_id IS NOT NULL")).isZero();
            assertThat(f.count("")).isEqualTo(1);
            assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isZero();
        }
    }

    @DatabaseTest
    void threadsRacingForExpiringLocksTakeThemOverOneAtATime(TestDatabase db) throws Exception {
        // Locks that expire while held: a holder never releases, so every later grant is a
        // takeover of an expired row. The checker: a grant is valid only after the previous
        // grant's expiry (by the database clock that wrote both).
        OfflineLockFixture f = OfflineLockFixture.create(db);
        int threads = 8;
        try (HikariDataSource pool = db.newPool(threads)) {
            JdbcLockManager locks = f.manager(pool, b -> b);
            List<long[]> grants = new ArrayList<>();
            Map<String, LongAdder> unexpected = new ConcurrentHashMap<>();
            AtomicBoolean stop = new AtomicBoolean();
            ExecutorService executor = Executors.newFixedThreadPool(threads);
            try {
                List<Future<?>> futures = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    String me = "worker-" + t;
                    futures.add(executor.submit(() -> {
                        while (!stop.get()) {
                            try {
                                locks.tryLock("order", "short", me, Duration.ofMillis(20));
                                HeldLock held = locks.holder("order", "short").orElse(null);
                                if (held != null && held.owner().equals(me)) {
                                    synchronized (grants) {
                                        grants.add(new long[] {micros(held.acquiredAt()), micros(held.expiresAt())});
                                    }
                                }
                            } catch (AlreadyLockedException expected) {
                                // somebody else's turn
                            } catch (RuntimeException e) {
                                unexpected
                                        .computeIfAbsent(
                                                e.getClass().getSimpleName() + ": " + e.getMessage(),
                                                k -> new LongAdder())
                                        .increment();
                            }
                        }
                        return null;
                    }));
                }
                Thread.sleep(3_000); // the race runs this long
                stop.set(true);
                for (Future<?> future : futures) {
                    future.get(1, TimeUnit.MINUTES);
                }
            } finally {
                executor.shutdownNow();
            }
            long[][] sorted =
                    grants.stream().sorted((a, b) -> Long.compare(a[0], b[0])).toArray(long[][]::new);
            long overlaps = 0;
            for (int i = 1; i < sorted.length; i++) {
                if (sorted[i][0] < sorted[i - 1][1]) {
                    overlaps++;
                }
            }
            System.out.printf(
                    "[%s] offline expiry takeover race: %d threads, %d grants observed, overlaps=%d, unexpected=%s%n",
                    db.id(), threads, sorted.length, overlaps, unexpected);
            assertThat(unexpected).isEmpty();
            assertThat(sorted.length).isGreaterThan(10);
            assertThat(overlaps).as("a grant before the previous one expired").isZero();
        }
    }

    private static long micros(java.time.Instant instant) {
        return instant.getEpochSecond() * 1_000_000 + instant.getNano() / 1_000;
    }

    @DatabaseTest
    void purgingInBoundedBatchesNeverRemovesALiveLockAndDoesNotStallAcquirers(TestDatabase db) throws Exception {
        OfflineLockFixture f = OfflineLockFixture.create(db);
        int expiredRows = 20_000;
        int acquirers = 4;
        // Expired rows on the very resources the acquirers take over, and many more besides.
        f.addExpiredRows("order", "r", expiredRows);
        try (HikariDataSource pool = db.newPool(acquirers + 1)) {
            JdbcLockManager locks = f.manager(pool, b -> b);
            AtomicBoolean purging = new AtomicBoolean(true);
            LongAdder acquired = new LongAdder();
            LongAdder lost = new LongAdder();
            Map<String, LongAdder> unexpected = new ConcurrentHashMap<>();
            List<Long> latenciesBefore = java.util.Collections.synchronizedList(new ArrayList<>());
            List<Long> latenciesDuringPurge = java.util.Collections.synchronizedList(new ArrayList<>());
            AtomicReference<List<Long>> latencies = new AtomicReference<>(latenciesBefore);
            ExecutorService executor = Executors.newFixedThreadPool(acquirers);
            long purged;
            long purgeNanos;
            try {
                List<Future<?>> futures = new ArrayList<>();
                for (int t = 0; t < acquirers; t++) {
                    int worker = t;
                    futures.add(executor.submit(() -> {
                        for (int i = worker; purging.get(); i += acquirers) {
                            String id = "r" + (i % expiredRows);
                            try {
                                long start = System.nanoTime();
                                LockId lockId = locks.tryLock("order", id, "w" + worker);
                                latencies.get().add(System.nanoTime() - start);
                                acquired.increment();
                                try {
                                    locks.checkLock(lockId, "order", id, "w" + worker);
                                } catch (LockNotHeldException e) {
                                    lost.increment(); // the purge deleted a live lock
                                }
                                locks.releaseLock(lockId, "w" + worker);
                            } catch (RuntimeException e) {
                                unexpected
                                        .computeIfAbsent(
                                                e.getClass().getSimpleName() + ": " + e.getMessage(),
                                                k -> new LongAdder())
                                        .increment();
                            }
                        }
                        return null;
                    }));
                }
                Thread.sleep(1_000); // latencies measured before the purge, this long
                latencies.set(latenciesDuringPurge);
                long start = System.nanoTime();
                purged = locks.purgeAllExpired(200);
                purgeNanos = System.nanoTime() - start;
                purging.set(false);
                for (Future<?> future : futures) {
                    future.get(1, TimeUnit.MINUTES);
                }
            } finally {
                purging.set(false);
                executor.shutdownNow();
            }
            long[] sorted = sorted(latenciesDuringPurge);
            long[] before = sorted(latenciesBefore);
            System.out.printf(
                    "[%s] offline purge under load: purged=%d rows in %.0f ms (batches of 200) while %d acquirers"
                            + " took %d locks; tryLock latency before purge p50=%.2f ms p99=%.2f ms max=%.2f ms,"
                            + " during purge p50=%.2f ms p99=%.2f ms max=%.2f ms;"
                            + " live locks lost=%d retries=%d unexpected=%s%n",
                    db.id(),
                    purged,
                    purgeNanos / 1e6,
                    acquirers,
                    acquired.sum(),
                    percentile(before, 0.50),
                    percentile(before, 0.99),
                    percentile(before, 1.0),
                    percentile(sorted, 0.50),
                    percentile(sorted, 0.99),
                    percentile(sorted, 1.0),
                    lost.sum(),
                    locks.retries(),
                    unexpected);

            assertThat(lost.sum()).as("live locks deleted by the purge").isZero();
            assertThat(unexpected).isEmpty();
            assertThat(acquired.sum()).isPositive();
            // Everything that was expired is gone, apart from rows the acquirers released after the purge passed.
            assertThat(f.count("lock_id IS NOT NULL AND lock_owner <> 'filler'"))
                    .as("live locks left")
                    .isZero();
            assertThat(f.count("lock_owner = 'filler'"))
                    .as("expired rows neither purged nor taken over")
                    .isZero();
            assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isZero();
        }
    }

    private static long[] sorted(List<Long> values) {
        synchronized (values) {
            return values.stream().mapToLong(Long::longValue).sorted().toArray();
        }
    }

    private static double percentile(long[] sorted, double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int index = (int) Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1);
        return sorted[Math.max(0, index)] / 1e6;
    }
}
