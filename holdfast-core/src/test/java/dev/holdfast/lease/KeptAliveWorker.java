package dev.holdfast.lease;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A worker of the lease fault tests under a kept-alive lease: it works until its guard tells it
 * (by an interrupt) that the lease was lost while the fault lasts, and, once the fault is over,
 * tries a write with its stale token. Shared by {@link LeasePoolFaultTest} and {@link LeaseStallFaultTest}.
 */
final class KeptAliveWorker {

    private KeptAliveWorker() {}

    /** What a worker saw: when it was told, what its guard said then, and what became of its stale write. */
    record Told(
            String name,
            long token,
            Instant toldAt,
            boolean onLostCalled,
            boolean validAfter,
            Instant lastConfirmedExpiry,
            boolean staleWriteAccepted,
            Throwable closeFailure) {}

    /**
     * Takes {@code name} as "holder" for {@code ttl} under keep-alive, writes once through
     * {@code pool}, counts {@code ready} down and works until told; records in {@code told} when.
     * After {@code faultOver} it writes again with its old token and closes its guard.
     */
    static Told work(
            LeaseService leases,
            Duration ttl,
            DataSource pool,
            FaultChecker checker,
            String name,
            CountDownLatch ready,
            CountDownLatch faultOver,
            Map<String, Instant> told)
            throws Exception {
        Lease lease = leases.tryAcquire(name, "holder", ttl).orElseThrow();
        checker.granted(lease);
        CountDownLatch onLost = new CountDownLatch(1);
        LeaseGuard guard = leases.keepAlive(lease, ttl, loss -> onLost.countDown());
        assertThat(checker.write(pool, name, "holder", guard.token())).isTrue();
        ready.countDown();
        Instant toldAt;
        try {
            // The work under the lease: it lasts until the guard interrupts it, which is what the test waits for.
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
        faultOver.await();
        boolean staleAccepted = checker.write(pool, name, "holder", lease.token());
        Throwable closeFailure = catchThrowable(guard::close);
        return new Told(
                name, lease.token(), toldAt, onLostCalled, validAfter, lastConfirmed, staleAccepted, closeFailure);
    }

    /** The workers of one fault test, one per name, each holding its lease under keep-alive once built. */
    static final class Crew {
        private final int size;
        private final CountDownLatch ready;
        private final CountDownLatch faultOver = new CountDownLatch(1);
        private final Map<String, Instant> toldWhileFaulty = new ConcurrentHashMap<>();
        private final List<Future<Told>> workers = new ArrayList<>();

        Crew(
                ExecutorService executor,
                LeaseService leases,
                Duration ttl,
                DataSource pool,
                FaultChecker checker,
                List<String> names)
                throws InterruptedException {
            size = names.size();
            ready = new CountDownLatch(size);
            for (String name : names) {
                workers.add(executor.submit(
                        () -> work(leases, ttl, pool, checker, name, ready, faultOver, toldWhileFaulty)));
            }
            assertThat(ready.await(10, TimeUnit.SECONDS))
                    .as("every worker holds its lease")
                    .isTrue();
        }

        /** Waits until every worker was told, at most {@code bound}: whether they all were (the fault still lasting). */
        boolean allToldWithin(Duration bound) {
            return LeaseFixture.holdsWithin(bound, Duration.ofMillis(10), () -> toldWhileFaulty.size() == size);
        }

        /** The fault is over: the workers try their stale writes. */
        void faultOver() {
            faultOver.countDown();
        }

        /** What each worker saw, once all are done. */
        List<Told> told() throws Exception {
            List<Told> told = new ArrayList<>();
            for (Future<Told> f : workers) {
                told.add(f.get(60, TimeUnit.SECONDS));
            }
            return told;
        }
    }

    /** How late each worker was told, from its last confirmed expiry (ms). */
    static List<Long> latenessMillis(List<Told> told) {
        return told.stream()
                .map(t -> Duration.between(t.lastConfirmedExpiry(), t.toldAt()).toMillis())
                .toList();
    }

    /** Each worker's guard called its callback, said it was invalid once it told, and refused to close quietly. */
    static void assertEachToldOfTheLoss(List<Told> told) {
        for (Told t : told) {
            assertThat(t.onLostCalled()).as("onLost called for " + t.name()).isTrue();
            assertThat(t.validAfter()).as("isValid() after the worker was told").isFalse();
            assertThat(t.closeFailure()).as("closing the lost guard").isInstanceOf(LeaseLostException.class);
        }
    }
}
