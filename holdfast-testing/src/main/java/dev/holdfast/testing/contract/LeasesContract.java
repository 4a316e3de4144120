package dev.holdfast.testing.contract;

import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseExpiredException;
import dev.holdfast.lease.LeaseGuard;
import dev.holdfast.lease.LeaseLostException;
import dev.holdfast.lease.LeaseNotHeldException;
import dev.holdfast.lease.LeaseTimeoutException;
import dev.holdfast.lease.Leases;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The contract of {@link Leases}, on every database of the matrix. Extend it and return fresh leases
 * on storage no other test uses:
 *
 * <pre>{@code
 * class MyLeasesTest extends LeasesContract {
 *     protected Leases leases(TestDatabase db) {
 *         return new MyLeases(db.dataSource(), db.newTableName("leases"));
 *     }
 * }
 * }</pre>
 *
 * Only the interface is used, so a decorator is proved the same way as an implementation. Each test
 * closes the leases it got.
 */
public abstract class LeasesContract {

    private static final Duration LONG = Duration.ofSeconds(30);
    private static final Duration SHORT = Duration.ofMillis(200);

    /**
     * Fresh leases whose names no other test sees. Each test gets its own from here, on each database it runs on.
     *
     * @param db the database the test runs on, with its pool and names for the tables the test creates
     * @return the leases under test, closed by the test that got them
     * @throws Exception if they cannot be made; the test fails with it
     */
    protected abstract Leases leases(TestDatabase db) throws Exception;

    @DatabaseTest
    void aLiveGrantRefusesEveryCallerEvenItsOwnerAndChangesNothing(TestDatabase db) throws Exception {
        try (Leases leases = leases(db)) {
            Lease a = leases.tryAcquire("job", "a", LONG).orElseThrow();
            assertThat(a.name()).isEqualTo("job");
            assertThat(a.owner()).isEqualTo("a");
            assertThat(a.token()).isPositive();
            assertThat(Duration.between(a.acquiredAt(), a.expiresAt())).isEqualTo(LONG);

            assertThat(leases.tryAcquire("job", "b", LONG)).isEmpty();
            assertThat(leases.tryAcquire("job", "a", LONG))
                    .as("exclusive per call, even for its owner")
                    .isEmpty();
            assertThat(leases.tryLock("job", "b", LONG)).isFalse();
            assertThat(leases.tryAcquireOrRenew("job", "b", LONG))
                    .as("another owner's grant is live")
                    .isEmpty();
            assertThatThrownBy(() -> leases.acquire("job", "b", LONG, Duration.ZERO))
                    .isInstanceOf(LeaseTimeoutException.class);
            assertThat(leases.find("job")).contains(a);
        }
    }

    @DatabaseTest
    void aTimeoutNamesTheHolderAndTheWaitersAheadWhenTheCallerGaveUp(TestDatabase db) throws Exception {
        try (Leases leases = leases(db)) {
            Lease a = leases.tryAcquire("job", "a", LONG).orElseThrow();
            for (Duration wait : List.of(SHORT, Duration.ZERO)) {
                LeaseTimeoutException e =
                        catchThrowableOfType(LeaseTimeoutException.class, () -> leases.acquire("job", "b", LONG, wait));
                assertThat(e.maxWait()).isEqualTo(wait);
                assertThat(e.holderKnown())
                        .as("holder known: " + e.getMessage())
                        .isTrue();
                assertThat(e.holder())
                        .as("who held it: owner, since, until, token")
                        .contains(a.holder());
                assertThat(e.waitersAhead()).as("nobody else waited").hasValue(0);
                assertThat(e.seenAt()).hasValueSatisfying(at -> assertThat(at).isAfterOrEqualTo(a.acquiredAt()));
                assertThat(e.holderUnknownBecause()).isEmpty();
            }
            assertThat(leases.find("job")).as("looking changed nothing").contains(a);
        }
    }

    @DatabaseTest
    void theReentrantFormExtendsTheOwnersGrantAndKeepsItsToken(TestDatabase db) throws Exception {
        try (Leases leases = leases(db)) {
            Lease a = leases.tryAcquire("job", "a", Duration.ofSeconds(10)).orElseThrow();
            assertThat(leases.tryLock("job", "a", Duration.ofSeconds(60))).isTrue();
            Lease again = leases.find("job").orElseThrow();
            assertThat(again.owner()).isEqualTo("a");
            assertThat(again.token()).isEqualTo(a.token());
            assertThat(again.expiresAt()).isAfter(a.expiresAt());
            Lease renewed = leases.renew(again, Duration.ofSeconds(5));
            assertThat(renewed.token()).isEqualTo(a.token());
            assertThat(renewed.expiresAt()).isBefore(again.expiresAt());
        }
    }

    @DatabaseTest
    void tryAcquireOrRenewReturnsTheOwnersGrantExtendedOrANewOne(TestDatabase db) throws Exception {
        try (Leases leases = leases(db)) {
            Lease first =
                    leases.tryAcquireOrRenew("job", "a", Duration.ofSeconds(10)).orElseThrow();
            assertThat(leases.find("job")).contains(first);
            Lease again =
                    leases.tryAcquireOrRenew("job", "a", Duration.ofSeconds(60)).orElseThrow();
            assertThat(again.token()).as("re-entered: the same grant").isEqualTo(first.token());
            assertThat(again.acquiredAt()).isEqualTo(first.acquiredAt());
            assertThat(again.expiresAt()).isAfter(first.expiresAt());
            assertThat(leases.find("job")).contains(again);
            leases.release(again);
            Lease next = leases.tryAcquireOrRenew("job", "b", LONG).orElseThrow();
            assertThat(next.token()).as("a new grant after the release").isGreaterThan(again.token());
        }
    }

    @DatabaseTest
    void everyNewGrantHasAGreaterTokenAndAReleasedLeaseIsFreeAtOnce(TestDatabase db) throws Exception {
        try (Leases leases = leases(db)) {
            long last = 0;
            for (int i = 0; i < 10; i++) {
                String owner = "owner-" + (i % 3);
                Lease lease = leases.tryAcquire("job", owner, LONG).orElseThrow();
                assertThat(lease.token()).isGreaterThan(last);
                last = lease.token();
                if (i % 2 == 0) {
                    leases.release(lease);
                } else {
                    leases.unlock("job", owner);
                }
                assertThat(leases.find("job").orElseThrow().isReleased()).isTrue();
            }
            assertThat(leases.list()).isEmpty();
        }
    }

    @DatabaseTest
    void anExpiredGrantIsTakenOverWithAGreaterTokenAndItsHolderIsToldItMayHaveOverlapped(TestDatabase db)
            throws Exception {
        try (Leases leases = leases(db)) {
            Lease a = leases.tryAcquire("job", "a", SHORT).orElseThrow();
            Lease b = awaitGrant(leases, "job", "b");
            assertThat(b.token()).isGreaterThan(a.token());
            assertThat(b.acquiredAt()).isAfterOrEqualTo(a.expiresAt());

            assertThatThrownBy(() -> leases.release(a))
                    .isInstanceOfSatisfying(
                            LeaseExpiredException.class,
                            e -> assertThat(e.reason()).isEqualTo(LeaseNotHeldException.Reason.GRANTED_AGAIN));
            assertThatThrownBy(() -> leases.renew(a, LONG)).isInstanceOf(LeaseExpiredException.class);
            assertThatThrownBy(() -> leases.keepAlive(a, LONG, null)).isInstanceOf(LeaseExpiredException.class);
            assertThat(leases.find("job")).contains(b);
        }
    }

    @DatabaseTest
    void aGrantThatIsNotTheCallersIsATypedErrorAndChangesNothing(TestDatabase db) throws Exception {
        try (Leases leases = leases(db)) {
            Lease a = leases.tryAcquire("job", "a", LONG).orElseThrow();
            Lease forgedOwner = new Lease("job", "b", a.token(), a.acquiredAt(), a.expiresAt());
            Lease forgedToken = new Lease("job", "a", a.token() + 5, a.acquiredAt(), a.expiresAt());

            assertThatThrownBy(() -> leases.unlock("job", "b"))
                    .isExactlyInstanceOf(LeaseNotHeldException.class)
                    .extracting("reason")
                    .isEqualTo(LeaseNotHeldException.Reason.OTHER_OWNER);
            assertThatThrownBy(() -> leases.release(forgedOwner)).isExactlyInstanceOf(LeaseNotHeldException.class);
            assertThatThrownBy(() -> leases.release(forgedToken)).isExactlyInstanceOf(LeaseNotHeldException.class);
            assertThatThrownBy(() -> leases.renew(forgedOwner, LONG)).isExactlyInstanceOf(LeaseNotHeldException.class);
            assertThatThrownBy(() -> leases.unlock("nothing", "a"))
                    .isExactlyInstanceOf(LeaseNotHeldException.class)
                    .extracting("reason")
                    .isEqualTo(LeaseNotHeldException.Reason.NO_SUCH_LEASE);
            assertThat(leases.find("job")).contains(a);

            leases.release(a);
            assertThatThrownBy(() -> leases.release(a))
                    .as("released twice")
                    .isExactlyInstanceOf(LeaseNotHeldException.class)
                    .extracting("reason")
                    .isEqualTo(LeaseNotHeldException.Reason.RELEASED);
        }
    }

    @DatabaseTest
    void aReleaseWithAMinimumHoldKeepsTheLeaseUntilThen(TestDatabase db) throws Exception {
        try (Leases leases = leases(db)) {
            Lease a = leases.tryAcquire("job", "a", LONG).orElseThrow();
            leases.release(a, Duration.ofMillis(400));
            Lease row = leases.find("job").orElseThrow();
            assertThat(row.isReleased()).isFalse();
            assertThat(row.expiresAt()).isEqualTo(a.acquiredAt().plusMillis(400));
            assertThat(leases.tryAcquire("job", "b", LONG)).isEmpty();
            Lease b = awaitGrant(leases, "job", "b");
            assertThat(b.acquiredAt()).isAfterOrEqualTo(a.acquiredAt().plusMillis(400));
        }
    }

    @DatabaseTest
    void anOperatorBreaksALeaseAndItsHolderIsToldOnItsNextCall(TestDatabase db) throws Exception {
        try (Leases leases = leases(db)) {
            Lease x = leases.tryAcquire("x", "a", LONG).orElseThrow();
            Lease y = leases.tryAcquire("y", "b", LONG).orElseThrow();
            assertThat(leases.list()).containsExactly(x, y);

            assertThat(leases.forceRelease("x")).isTrue();
            assertThat(leases.forceRelease("x")).isFalse();
            assertThat(leases.list()).containsExactly(y);
            assertThatThrownBy(() -> leases.release(x)).isInstanceOfSatisfying(LeaseNotHeldException.class, e -> {
                assertThat(e.reason()).isEqualTo(LeaseNotHeldException.Reason.BROKEN);
                assertThat(e.brokenBy()).isEmpty();
                assertThat(e.brokenAt()).isPresent();
            });
            Lease next = leases.tryAcquire("x", "d", LONG).orElseThrow();
            assertThat(next.token()).isGreaterThan(x.token());

            // an operator who names themselves is named to the holder, with the time
            Instant before = leases.find("y").orElseThrow().acquiredAt();
            assertThat(leases.forceRelease("y", "root")).isTrue();
            assertThatThrownBy(() -> leases.renew(y, LONG)).isInstanceOfSatisfying(LeaseNotHeldException.class, e -> {
                assertThat(e.reason()).isEqualTo(LeaseNotHeldException.Reason.BROKEN);
                assertThat(e.brokenBy()).contains("root");
                assertThat(e.brokenAt()).hasValueSatisfying(at -> assertThat(at).isAfterOrEqualTo(before));
                assertThat(e.getMessage()).contains("broken by root");
            });
            // a later grant released by its own holder is not reported as broken
            Lease again = leases.tryAcquire("y", "b", LONG).orElseThrow();
            leases.release(again);
            assertThatThrownBy(() -> leases.release(again))
                    .isInstanceOfSatisfying(
                            LeaseNotHeldException.class,
                            e -> assertThat(e.reason()).isEqualTo(LeaseNotHeldException.Reason.RELEASED));
            assertThatThrownBy(() -> leases.forceRelease("y", " ")).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @DatabaseTest
    void aBlockingAcquireGetsTheLeaseWhenTheHolderReleasesIt(TestDatabase db) throws Exception {
        try (Leases leases = leases(db)) {
            Lease a = leases.tryAcquire("job", "a", LONG).orElseThrow();
            ExecutorService waiter = Executors.newSingleThreadExecutor();
            try {
                CountDownLatch started = new CountDownLatch(1);
                Future<Lease> b = waiter.submit(() -> {
                    started.countDown();
                    return leases.acquire("job", "b", LONG, Duration.ofSeconds(20));
                });
                started.await();
                Thread.sleep(100);
                assertThat(b).isNotDone();
                leases.release(a);
                Lease granted = b.get(20, TimeUnit.SECONDS);
                assertThat(granted.owner()).isEqualTo("b");
                assertThat(granted.token()).isGreaterThan(a.token());
            } finally {
                waiter.shutdownNow();
            }
            assertThatThrownBy(() -> leases.acquire("job", "c", LONG, Duration.ofMillis(300)))
                    .isInstanceOf(LeaseTimeoutException.class);
        }
    }

    @DatabaseTest
    void aKeptAliveLeaseOutlivesItsTtlAndABrokenOneIsReportedToTheWork(TestDatabase db) throws Exception {
        try (Leases leases = leases(db)) {
            Lease a = leases.tryAcquire("job", "a", Duration.ofSeconds(2)).orElseThrow();
            AtomicReference<LeaseLostException> lost = new AtomicReference<>();
            CountDownLatch told = new CountDownLatch(1);
            ExecutorService worker = Executors.newSingleThreadExecutor();
            try {
                Future<Boolean> work = worker.submit(() -> {
                    try (LeaseGuard guard = leases.keepAlive(a, Duration.ofSeconds(2), e -> {
                        lost.set(e);
                        told.countDown();
                    })) {
                        Thread.sleep(3000); // past the first TTL: still valid thanks to the renewals
                        boolean validAfterTtl = guard.isValid();
                        assertThat(leases.tryAcquire("job", "b", LONG)).isEmpty();
                        leases.forceRelease("job", "root");
                        try {
                            Thread.sleep(10_000); // interrupted when the guard sees the loss
                        } catch (InterruptedException expected) {
                            Thread.currentThread().interrupt();
                        }
                        assertThatThrownBy(guard::checkValid).isInstanceOf(LeaseLostException.class);
                        return validAfterTtl;
                    } catch (LeaseLostException closeSawIt) {
                        return true;
                    }
                });
                assertThat(work.get(30, TimeUnit.SECONDS)).isTrue();
                assertThat(told.await(10, TimeUnit.SECONDS)).isTrue();
                LeaseLostException lostException = lost.get();
                assertThat(lostException).isNotNull();
                // A renewal that found it broken says by whom (the guard's deadline can win that race on a
                // stalled machine; then there is no refusal). The holder's own next call always says so.
                lostException.refusal().ifPresent(refusal -> {
                    assertThat(refusal.reason()).isEqualTo(LeaseNotHeldException.Reason.BROKEN);
                    assertThat(refusal.brokenBy()).contains("root");
                    assertThat(lostException.getMessage()).contains("broken by root");
                });
                assertThatThrownBy(() -> leases.renew(a, LONG))
                        .isInstanceOfSatisfying(LeaseNotHeldException.class, e -> {
                            assertThat(e.reason()).isEqualTo(LeaseNotHeldException.Reason.BROKEN);
                            assertThat(e.brokenBy()).contains("root");
                        });
            } finally {
                worker.shutdownNow();
            }
        }
    }

    @DatabaseTest
    void concurrentAcquiresOfOneNameGrantExactlyOne(TestDatabase db) throws Exception {
        try (Leases leases = leases(db)) {
            for (int round = 0; round < 10; round++) {
                String name = "job-" + round;
                List<Optional<Lease>> results =
                        Race.run(8, i -> () -> leases.tryAcquire(name, i % 2 == 0 ? "same-owner" : "owner-" + i, LONG));
                assertThat(results.stream().filter(Optional::isPresent).count())
                        .as("round %d", round)
                        .isEqualTo(1);
            }
        }
    }

    @DatabaseTest
    void badInputIsATypedErrorAndGrantsNothing(TestDatabase db) throws Exception {
        try (Leases leases = leases(db)) {
            List<Runnable> bad = List.of(
                    () -> leases.tryAcquire(" ", "a", LONG),
                    () -> leases.tryAcquire("job", "", LONG),
                    () -> leases.tryAcquire("x".repeat(201), "a", LONG),
                    () -> leases.tryAcquire("job", "a\u0007", LONG),
                    () -> leases.tryAcquire("job", "a", Duration.ZERO),
                    () -> leases.tryAcquire("job", "a", Duration.ofDays(367)),
                    () -> leases.tryLock("job", "a", Duration.ofMillis(-1)),
                    () -> leases.tryAcquireOrRenew("job", "a", Duration.ofMillis(-1)));
            for (Runnable call : bad) {
                assertThatThrownBy(call::run).isInstanceOf(IllegalArgumentException.class);
            }
            assertThatThrownBy(() -> leases.acquire("job", "a", LONG, Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThat(leases.find("job")).isEmpty();
            assertThat(leases.list()).isEmpty();
        }
    }

    /** Tries every 10 ms until granted (at most 10 s). */
    private static Lease awaitGrant(Leases leases, String name, String owner) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            Optional<Lease> lease = leases.tryAcquire(name, owner, LONG);
            if (lease.isPresent()) {
                return lease.get();
            }
            Thread.sleep(10);
        }
        throw new AssertionError(name + " was never granted to " + owner);
    }
}
