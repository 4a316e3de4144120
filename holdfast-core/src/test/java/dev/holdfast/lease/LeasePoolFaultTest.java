package dev.holdfast.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.SchedulingDelay;
import dev.holdfast.testing.FaultDatabase;
import dev.holdfast.testing.FaultTest;

import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * Pool exhaustion: the application's own work holds every connection of the pool the lease service
 * uses (HikariCP's default 30 s borrow timeout), during keep-alive and during {@link LeaseService#acquire}.
 * Run on the fault servers, with the {@link FaultChecker} as independent checker.
 */
class LeasePoolFaultTest {

    private static final Duration TTL = Duration.ofMillis(1500);
    private static final Duration BORROW_TIMEOUT = Duration.ofSeconds(30);
    private static final long TOLD_SLACK_MILLIS = 250;
    private static final long NOTICE_MILLIS = 1000;

    /**
     * Two kept-alive leases; then the application takes both pool connections and keeps them for
     * longer than the TTL, so every renewal waits for the pool. Each worker is told by its last
     * confirmed expiry; another application gets the leases within the TTL; once the pool is free
     * the stale fenced writes are refused, closing the guards reports the loss, and the same service
     * acquires and keeps alive again.
     */
    @FaultTest
    void keepAliveWhileThePoolIsExhausted(FaultDatabase db) throws Exception {
        String table = FaultChecker.installLeases(db);
        List<String> names = List.of("pool-a", "pool-b");
        FaultChecker checker = new FaultChecker(db, names.toArray(String[]::new));
        HikariDataSource pool = db.newPool("app", 2, BORROW_TIMEOUT);
        HikariDataSource otherPool = db.newPool("other", 4, BORROW_TIMEOUT);
        ExecutorService executor = Executors.newCachedThreadPool();
        SchedulingDelay delay = SchedulingDelay.watch();
        try (LeaseService leases = LeaseService.builder(pool).table(table).build();
                LeaseService other =
                        LeaseService.builder(otherPool).table(table).build()) {
            KeptAliveWorker.Crew crew = new KeptAliveWorker.Crew(executor, leases, TTL, pool, checker, names);

            List<Lease> taken = new ArrayList<>();
            List<Long> waitedMillis = new ArrayList<>();
            Connection first = pool.getConnection();
            Connection second = pool.getConnection();
            long exhaustedAt = System.nanoTime();
            boolean allToldWhileExhausted = false;
            try {
                for (String name : names) {
                    Lease lease = other.acquire(name, "other", Duration.ofSeconds(30), Duration.ofSeconds(20));
                    waitedMillis.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - exhaustedAt));
                    checker.granted(lease);
                    assertThat(checker.write(otherPool, name, "other", lease.token()))
                            .isTrue();
                    taken.add(lease);
                }
                await("the pool was exhausted for more than the TTL")
                        .atMost(Duration.ofSeconds(10))
                        .pollInterval(Duration.ofMillis(10))
                        .until(() ->
                                System.nanoTime() - exhaustedAt > TTL.toNanos() + TimeUnit.MILLISECONDS.toNanos(200));
                // The pool stays exhausted until every worker was told, or long past any deadline.
                allToldWhileExhausted = crew.allToldWithin(Duration.ofSeconds(5));
            } finally {
                first.close();
                second.close();
                crew.faultOver();
            }
            List<KeptAliveWorker.Told> told = crew.told();
            for (Lease lease : taken) {
                assertThat(checker.ended(lease)).isTrue();
                other.release(lease);
            }

            // The same service, with its pool free again, acquires and keeps alive.
            Lease again = leases.tryAcquire(names.get(0), "holder-again", TTL).orElseThrow();
            checker.granted(again);
            try (LeaseGuard guard = leases.keepAlive(again, TTL, null)) {
                Instant granted = guard.lease().expiresAt();
                await("a renewal after the exhaustion")
                        .atMost(Duration.ofSeconds(30))
                        .pollInterval(Duration.ofMillis(10))
                        .until(() -> guard.lease().expiresAt().isAfter(granted));
                assertThat(checker.write(pool, names.get(0), "holder-again", guard.token()))
                        .isTrue();
                checker.renewed(guard.lease());
                assertThat(checker.ended(guard.lease())).isTrue();
            }

            FaultChecker.Report report = checker.check();
            long machineDelay = delay.worstMillis(); // this machine's own lateness in this run, added to every bound
            System.out.printf(
                    "[%s] this machine woke a sleeping thread up to %d ms late meanwhile%n", db.id(), machineDelay);
            long worstLateness = KeptAliveWorker.latenessMillis(told).stream()
                    .mapToLong(Long::longValue)
                    .max()
                    .orElseThrow();
            long worstWait =
                    waitedMillis.stream().mapToLong(Long::longValue).max().orElseThrow();
            long staleAccepted = told.stream()
                    .filter(KeptAliveWorker.Told::staleWriteAccepted)
                    .count();
            System.out.printf(
                    "[%s] pool exhaustion during keep-alive: TTL %d ms; workers told %s ms relative to their last"
                            + " confirmed expiry (worst %d ms); other blocked %s ms; stale fenced writes accepted %d of %d; %s%n",
                    db.id(),
                    TTL.toMillis(),
                    KeptAliveWorker.latenessMillis(told),
                    worstLateness,
                    waitedMillis,
                    staleAccepted,
                    told.size(),
                    report);
            assertThat(allToldWhileExhausted)
                    .as("every worker was told while the pool was still exhausted")
                    .isTrue();
            KeptAliveWorker.assertEachToldOfTheLoss(told);
            assertThat(worstLateness)
                    .as("worst time from the deadline to the worker being told (ms)")
                    .isLessThanOrEqualTo(TOLD_SLACK_MILLIS + machineDelay);
            assertThat(worstWait)
                    .as("longest another application was blocked (ms)")
                    .isLessThanOrEqualTo(TTL.toMillis() + NOTICE_MILLIS + 2 * machineDelay);
            assertThat(staleAccepted).as("stale writes accepted").isZero();
            report.assertNoViolation();
        } finally {
            executor.shutdownNow();
            delay.close();
        }
    }

    /**
     * A {@code lock()} that starts while the application holds every connection of the pool keeps
     * waiting (no spurious grant, no error), and gets the lease as soon as the pool is free and the
     * holder releases it; the old holder's fenced write is then refused.
     */
    @FaultTest
    void lockWaitingOnAnExhaustedPoolGetsTheLeaseOnceItIsFree(FaultDatabase db) throws Exception {
        String table = FaultChecker.installLeases(db);
        FaultChecker checker = new FaultChecker(db, "job");
        HikariDataSource pool = db.newPool("app", 2, BORROW_TIMEOUT);
        LeaseRestartFaultTest.Borrows app = new LeaseRestartFaultTest.Borrows(pool);
        HikariDataSource holderPool = db.newPool("holder", 2, BORROW_TIMEOUT);
        ExecutorService executor = Executors.newCachedThreadPool();
        try (LeaseService leases = LeaseService.builder(app).table(table).build();
                LeaseService holder =
                        LeaseService.builder(holderPool).table(table).build()) {
            Lease held =
                    holder.tryAcquire("job", "holder", Duration.ofSeconds(60)).orElseThrow();
            checker.granted(held);
            assertThat(checker.write(holderPool, "job", "holder", held.token())).isTrue();

            Future<Lease> waiter;
            Connection first = pool.getConnection();
            Connection second = pool.getConnection();
            try {
                waiter = executor.submit(() -> {
                    Thread.currentThread().setName("waiter");
                    return leases.acquire("job", "waiter", Duration.ofSeconds(30), Duration.ofSeconds(40));
                });
                // lock() borrows on its own thread or on the library's background threads
                await("the waiter asks the exhausted pool")
                        .atMost(Duration.ofSeconds(30))
                        .pollInterval(Duration.ofMillis(10))
                        .until(() -> app.borrows("waiter") + app.borrows("holdfast-lease-keepalive-") >= 1);
            } finally {
                first.close();
                second.close();
            }
            assertThat(checker.ended(held)).isTrue();
            holder.release(held);
            long releasedAt = System.nanoTime();
            Lease granted = waiter.get(60, TimeUnit.SECONDS);
            long handOffMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - releasedAt);
            checker.granted(granted);
            assertThat(checker.write(pool, "job", "waiter", granted.token())).isTrue();
            assertThat(checker.write(holderPool, "job", "holder", held.token()))
                    .as("the old holder's write")
                    .isFalse();
            assertThat(checker.ended(granted)).isTrue();
            leases.release(granted);

            FaultChecker.Report report = checker.check();
            System.out.printf(
                    "[%s] pool exhaustion during lock(): the waiter was granted %d ms after the release"
                            + " (token %d > %d); %s%n",
                    db.id(), handOffMillis, granted.token(), held.token(), report);
            assertThat(granted.token()).isGreaterThan(held.token());
            report.assertNoViolation();
        } finally {
            executor.shutdownNow();
        }
    }

    /**
     * {@code lock()} on a fresh service (on PostgreSQL its listener has no connection yet) while the
     * application holds every connection of its pool: the wait bound covers the wait for a
     * connection, so the call ends within {@code maxWait} (plus a margin) with a typed error instead
     * of HikariCP's 30 s borrow timeout; nothing is granted, and the same service acquires once the
     * pool is free.
     */
    @FaultTest
    void lockHonoursItsWaitBoundWhileThePoolIsExhausted(FaultDatabase db) throws Exception {
        String table = FaultChecker.installLeases(db);
        HikariDataSource pool = db.newPool("app", 2, BORROW_TIMEOUT);
        try (LeaseService leases = LeaseService.builder(pool).table(table).build()) {
            Duration maxWait = Duration.ofSeconds(1);
            Throwable failure;
            long elapsedMillis;
            try (Connection first = pool.getConnection();
                    Connection second = pool.getConnection()) {
                long start = System.nanoTime();
                failure = catchThrowable(() -> leases.acquire("job", "bounded", TTL, maxWait));
                elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            }
            System.out.printf(
                    "[%s] pool exhaustion during lock(): a %d ms bound ended after %d ms with %s%n",
                    db.id(), maxWait.toMillis(), elapsedMillis, failure == null ? "a grant" : failure);
            assertThat(failure)
                    .as("lock() with the pool exhausted")
                    .isInstanceOfAny(LeaseTimeoutException.class, dev.holdfast.DatabaseException.class);
            assertThat(elapsedMillis)
                    .as("a %d ms wait bound with the pool exhausted", maxWait.toMillis())
                    .isLessThan(maxWait.toMillis() + 1000);
            assertThat(leases.find("job")).as("nothing granted").isEmpty();
            Lease lease = leases.acquire("job", "bounded", TTL, Duration.ofSeconds(10));
            leases.release(lease);
        }
    }
}
