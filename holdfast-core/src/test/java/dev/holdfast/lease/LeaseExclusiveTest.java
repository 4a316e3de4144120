package dev.holdfast.lease;

import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each grant is exclusive to the call that got it: concurrent acquisitions by one owner (two runs
 * of a job on one server) never both hold the lease. The checker is independent of the service:
 * an in-memory count of calls inside their critical section, and the set of tokens granted.
 */
class LeaseExclusiveTest {

    private static final int THREADS = 8;
    private static final Duration TTL = Duration.ofSeconds(30);

    @DatabaseTest
    void concurrentTryAcquiresByOneOwnerNeverBothSucceed(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        int rounds = 150;
        try (LeaseService leases = LeaseFixture.service(db.newPool(THREADS), table)) {
            CyclicBarrier start = new CyclicBarrier(THREADS);
            CyclicBarrier end = new CyclicBarrier(THREADS);
            AtomicInteger inside = new AtomicInteger();
            AtomicInteger overlaps = new AtomicInteger();
            AtomicInteger[] grantsPerRound = new AtomicInteger[rounds];
            for (int r = 0; r < rounds; r++) {
                grantsPerRound[r] = new AtomicInteger();
            }
            Set<Long> tokens = ConcurrentHashMap.newKeySet();
            AtomicInteger repeats = new AtomicInteger();
            ExecutorService pool = Executors.newFixedThreadPool(THREADS);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < THREADS; t++) {
                    done.add(pool.submit(() -> {
                        for (int r = 0; r < rounds; r++) {
                            start.await(30, TimeUnit.SECONDS);
                            Optional<Lease> got = leases.tryAcquire("job", "server-1", TTL);
                            if (got.isPresent()) {
                                grantsPerRound[r].incrementAndGet();
                                if (inside.incrementAndGet() > 1) {
                                    overlaps.incrementAndGet();
                                }
                                if (!tokens.add(got.get().token())) {
                                    repeats.incrementAndGet();
                                }
                                Thread.sleep(1); // holds the lease a while
                                inside.decrementAndGet();
                            }
                            end.await(30, TimeUnit.SECONDS); // every attempt of the round is over
                            if (got.isPresent()) {
                                leases.release(got.get());
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> f : done) {
                    f.get(5, TimeUnit.MINUTES);
                }
            } finally {
                pool.shutdownNow();
            }
            int rounds0 = 0;
            for (AtomicInteger g : grantsPerRound) {
                assertThat(g.get()).as("grants in one round").isLessThanOrEqualTo(1);
                rounds0 += g.get() == 0 ? 1 : 0;
            }
            assertThat(overlaps.get()).as("two calls held the lease at once").isZero();
            assertThat(repeats.get()).as("a token granted twice").isZero();
            assertThat(tokens).hasSize(rounds - rounds0);
            assertThat(rounds0)
                    .as("rounds without any grant (the lease is released before the next)")
                    .isZero();
        }
    }

    @DatabaseTest
    void concurrentLocksByOneOwnerNeverOverlap(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        int perThread = 15;
        try (LeaseService leases = LeaseFixture.service(db.newPool(THREADS + 2), table)) {
            AtomicInteger inside = new AtomicInteger();
            AtomicInteger overlaps = new AtomicInteger();
            Set<Long> tokens = ConcurrentHashMap.newKeySet();
            CyclicBarrier start = new CyclicBarrier(THREADS);
            ExecutorService pool = Executors.newFixedThreadPool(THREADS);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < THREADS; t++) {
                    done.add(pool.submit(() -> {
                        start.await(30, TimeUnit.SECONDS);
                        for (int i = 0; i < perThread; i++) {
                            Lease lease = leases.acquire("job", "server-1", TTL, Duration.ofSeconds(60));
                            if (inside.incrementAndGet() > 1) {
                                overlaps.incrementAndGet();
                            }
                            tokens.add(lease.token());
                            Thread.sleep(2); // holds the lease a while
                            inside.decrementAndGet();
                            leases.release(lease);
                        }
                        return null;
                    }));
                }
                for (Future<?> f : done) {
                    f.get(5, TimeUnit.MINUTES);
                }
            } finally {
                pool.shutdownNow();
            }
            assertThat(overlaps.get()).as("two calls held the lease at once").isZero();
            assertThat(tokens).as("each grant a token of its own").hasSize(THREADS * perThread);
        }
    }
}
