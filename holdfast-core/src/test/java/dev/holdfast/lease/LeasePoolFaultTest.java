package dev.holdfast.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.testing.FaultDatabase;
import dev.holdfast.testing.FaultTest;

import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Pool exhaustion: the application's own work holds every connection of the pool the lease service
 * uses (HikariCP's default 30 s borrow timeout), during keep-alive and during {@link LeaseService#lock}.
 * Run on the fault servers, with the {@link FaultChecker} as independent checker.
 */
class LeasePoolFaultTest {

    private static final Duration TTL = Duration.ofMillis(1500);
    private static final Duration BORROW_TIMEOUT = Duration.ofSeconds(30);
    private static final long TOLD_SLACK_MILLIS = 250;
    private static final long NOTICE_MILLIS = 1000;

    record Told(String name, Instant toldAt, boolean onLostCalled, boolean validAfter, Instant lastConfirmedExpiry,
                boolean staleWriteAccepted, Throwable closeFailure) {
    }

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
        try (LeaseService leases = LeaseService.builder(pool).table(table).build();
             LeaseService other = LeaseService.builder(otherPool).table(table).build()) {
            CountDownLatch ready = new CountDownLatch(names.size());
            CountDownLatch freed = new CountDownLatch(1);
            Map<String, Instant> toldWhileExhausted = new ConcurrentHashMap<>();
            List<Future<Told>> workers = new ArrayList<>();
            for (String name : names) {
                workers.add(executor.submit(() -> work(leases, pool, checker, name, ready, freed, toldWhileExhausted)));
            }
            assertThat(ready.await(10, TimeUnit.SECONDS)).isTrue();

            List<Lease> taken = new ArrayList<>();
            List<Long> waitedMillis = new ArrayList<>();
            Connection first = pool.getConnection();
            Connection second = pool.getConnection();
            long exhaustedAt = System.nanoTime();
            boolean allToldWhileExhausted = false;
            try {
                for (String name : names) {
                    Lease lease = other.lock(name, "other", Duration.ofSeconds(30), Duration.ofSeconds(20));
                    waitedMillis.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - exhaustedAt));
                    checker.granted(lease);
                    assertThat(checker.write(otherPool, name, "other", lease.token())).isTrue();
                    taken.add(lease);
                }
                LeaseRestartFaultTest.await("the pool was exhausted for more than the TTL", Duration.ofSeconds(10),
                        () -> System.nanoTime() - exhaustedAt > TTL.toNanos() + TimeUnit.MILLISECONDS.toNanos(200));
                // The pool stays exhausted until every worker was told, or long past any deadline.
                allToldWhileExhausted = LeaseRestartFaultTest.awaitQuietly(Duration.ofSeconds(5),
                        () -> toldWhileExhausted.size() == names.size());
            } finally {
                first.close();
                second.close();
                freed.countDown();
            }
            List<Told> told = new ArrayList<>();
            for (Future<Told> f : workers) {
                told.add(f.get(60, TimeUnit.SECONDS));
            }
            for (Lease lease : taken) {
                assertThat(checker.ended(lease)).isTrue();
                other.release(lease);
            }

            // The same service, with its pool free again, acquires and keeps alive.
            Lease again = leases.tryAcquire(names.get(0), "holder-again", TTL).orElseThrow();
            checker.granted(again);
            try (LeaseGuard guard = leases.keepAlive(again, TTL, null)) {
                Instant granted = guard.lease().expiresAt();
                LeaseRestartFaultTest.await("a renewal after the exhaustion", Duration.ofSeconds(10),
                        () -> guard.lease().expiresAt().isAfter(granted));
                assertThat(checker.write(pool, names.get(0), "holder-again", guard.token())).isTrue();
                checker.renewed(guard.lease());
                assertThat(checker.ended(guard.lease())).isTrue();
            }

            FaultChecker.Report report = checker.check();
            long worstLateness = told.stream()
                    .mapToLong(t -> Duration.between(t.lastConfirmedExpiry(), t.toldAt()).toMillis()).max().orElseThrow();
            long worstWait = waitedMillis.stream().mapToLong(Long::longValue).max().orElseThrow();
            long staleAccepted = told.stream().filter(Told::staleWriteAccepted).count();
            System.out.printf("[%s] pool exhaustion during keep-alive: TTL %d ms; workers told %s ms relative to their last"
                            + " confirmed expiry (worst %d ms); other blocked %s ms; stale fenced writes accepted %d of %d; %s%n",
                    db.id(), TTL.toMillis(),
                    told.stream().map(t -> Duration.between(t.lastConfirmedExpiry(), t.toldAt()).toMillis()).toList(),
                    worstLateness, waitedMillis, staleAccepted, told.size(), report);
            assertThat(allToldWhileExhausted).as("every worker was told while the pool was still exhausted").isTrue();
            for (Told t : told) {
                assertThat(t.onLostCalled()).as("onLost called for " + t.name()).isTrue();
                assertThat(t.validAfter()).as("isValid() after the worker was told").isFalse();
                assertThat(t.closeFailure()).as("closing the lost guard").isInstanceOf(LeaseLostException.class);
            }
            assertThat(worstLateness).as("worst time from the deadline to the worker being told (ms)")
                    .isLessThanOrEqualTo(TOLD_SLACK_MILLIS);
            assertThat(worstWait).as("longest another application was blocked (ms)")
                    .isLessThanOrEqualTo(TTL.toMillis() + NOTICE_MILLIS);
            assertThat(staleAccepted).as("stale writes accepted").isZero();
            assertThat(report.staleAccepted()).as("stale writes accepted").isZero();
            assertThat(report.tokenRepeats()).as("token repeats").isZero();
            assertThat(report.overlaps()).as("overlapping live holders").isZero();
            assertThat(report.lostOrDuplicated()).as("lost or duplicated updates").isZero();
        } finally {
            executor.shutdownNow();
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
             LeaseService holder = LeaseService.builder(holderPool).table(table).build()) {
            Lease held = holder.tryAcquire("job", "holder", Duration.ofSeconds(60)).orElseThrow();
            checker.granted(held);
            assertThat(checker.write(holderPool, "job", "holder", held.token())).isTrue();

            Future<Lease> waiter;
            Connection first = pool.getConnection();
            Connection second = pool.getConnection();
            try {
                waiter = executor.submit(() -> {
                    Thread.currentThread().setName("waiter");
                    return leases.lock("job", "waiter", Duration.ofSeconds(30), Duration.ofSeconds(40));
                });
                // lock() borrows on its own thread or on the library's background threads
                LeaseRestartFaultTest.await("the waiter asks the exhausted pool", Duration.ofSeconds(10),
                        () -> app.borrows("waiter") + app.borrows("holdfast-lease-keepalive-") >= 1);
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
            assertThat(checker.write(holderPool, "job", "holder", held.token())).as("the old holder's write").isFalse();
            assertThat(checker.ended(granted)).isTrue();
            leases.release(granted);

            FaultChecker.Report report = checker.check();
            System.out.printf("[%s] pool exhaustion during lock(): the waiter was granted %d ms after the release"
                            + " (token %d > %d); %s%n",
                    db.id(), handOffMillis, granted.token(), held.token(), report);
            assertThat(granted.token()).isGreaterThan(held.token());
            assertThat(report.staleAccepted()).as("stale writes accepted").isZero();
            assertThat(report.tokenRepeats()).as("token repeats").isZero();
            assertThat(report.overlaps()).as("overlapping live holders").isZero();
            assertThat(report.lostOrDuplicated()).as("lost or duplicated updates").isZero();
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
            try (Connection first = pool.getConnection(); Connection second = pool.getConnection()) {
                long start = System.nanoTime();
                failure = catchThrowable(() -> leases.lock("job", "bounded", TTL, maxWait));
                elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            }
            System.out.printf("[%s] pool exhaustion during lock(): a %d ms bound ended after %d ms with %s%n",
                    db.id(), maxWait.toMillis(), elapsedMillis, failure == null ? "a grant" : failure);
            assertThat(failure).as("lock() with the pool exhausted")
                    .isInstanceOfAny(LeaseTimeoutException.class, dev.holdfast.DatabaseException.class);
            assertThat(elapsedMillis).as("a %d ms wait bound with the pool exhausted", maxWait.toMillis())
                    .isLessThan(maxWait.toMillis() + 1000);
            assertThat(leases.find("job")).as("nothing granted").isEmpty();
            Lease lease = leases.lock("job", "bounded", TTL, Duration.ofSeconds(10));
            leases.release(lease);
        }
    }

    private static Told work(LeaseService leases, HikariDataSource pool, FaultChecker checker, String name,
                             CountDownLatch ready, CountDownLatch freed, Map<String, Instant> told) throws Exception {
        Lease lease = leases.tryAcquire(name, "holder", TTL).orElseThrow();
        checker.granted(lease);
        CountDownLatch onLost = new CountDownLatch(1);
        LeaseGuard guard = leases.keepAlive(lease, TTL, loss -> onLost.countDown());
        assertThat(checker.write(pool, name, "holder", guard.token())).isTrue();
        ready.countDown();
        Instant toldAt;
        try {
            Thread.sleep(TimeUnit.MINUTES.toMillis(2));
            throw new AssertionError("the worker under '" + name + "' was never told that its lease was lost");
        } catch (InterruptedException e) {
            toldAt = Instant.now();
            told.put(name, toldAt);
        }
        boolean validAfter = guard.isValid();
        boolean onLostCalled = onLost.await(5, TimeUnit.SECONDS);
        Instant lastConfirmed = guard.lease().expiresAt();
        checker.lostAt(lease, lastConfirmed);
        freed.await();
        boolean staleAccepted = checker.write(pool, name, "holder", lease.token());
        Throwable closeFailure = catchThrowable(guard::close);
        return new Told(name, toldAt, onLostCalled, validAfter, lastConfirmed, staleAccepted, closeFailure);
    }
}
