package dev.holdfast.lease;

import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/** Work under a lease renewed in the background, {@link LeaseService#keepAlive}. */
class LeaseKeepAliveTest {

    private static final Duration TTL = Duration.ofMillis(300);
    /**
     * A renewal every half second (a third of it): work of twice the ttl is renewed four times or so,
     * and a renewal may be up to a second late (a stalled flush on a shared machine) without the lease running out.
     */
    private static final Duration RENEWED_TTL = Duration.ofMillis(1500);

    @DatabaseTest
    void theLeaseOutlivesItsTtlWhileTheWorkRuns(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = LeaseFixture.service(db.newPool(2), table);
                LeaseService other = LeaseFixture.service(db.newPool(2), table)) {
            Lease lease = leases.tryAcquire("job", "worker", RENEWED_TTL).orElseThrow();
            try (LeaseGuard guard = leases.keepAlive(lease, RENEWED_TTL, null)) {
                for (int i = 0; i < 10; i++) {
                    Thread.sleep(RENEWED_TTL.toMillis() / 5); // works under the lease, past its TTL in all
                    guard.checkValid();
                    assertThat(other.tryAcquire("job", "other", TTL)).isEmpty();
                }
                assertThat(guard.token()).isEqualTo(lease.token());
                assertThat(guard.lease().expiresAt()).isAfter(lease.expiresAt());
            }
            assertThat(other.find("job").orElseThrow().isReleased())
                    .as("closing released it")
                    .isTrue();
            assertThat(other.tryAcquire("job", "other", TTL).orElseThrow().token())
                    .isEqualTo(lease.token() + 1);
        }
    }

    @DatabaseTest
    void aLostLeaseIsToldAtOnceByFlagCallbackAndInterrupt(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = LeaseFixture.service(db.newPool(2), table);
                LeaseService operator = LeaseFixture.service(db.newPool(2), table)) {
            Lease lease = leases.tryAcquire("job", "worker", RENEWED_TTL).orElseThrow();
            AtomicReference<LeaseLostException> told = new AtomicReference<>();
            CountDownLatch callback = new CountDownLatch(1);
            LeaseGuard guard = leases.keepAlive(
                    lease,
                    RENEWED_TTL,
                    e -> { // renewal at 0.5 s, deadline at 1.5 s
                        told.set(e);
                        callback.countDown();
                    });
            Thread.sleep(50); // works under the lease a while before an operator breaks it
            assertThat(operator.forceRelease("job")).isTrue();
            long start = System.nanoTime();
            // the work under the lease, until the guard interrupts it
            Throwable slept = catchThrowable(() -> Thread.sleep(10_000));
            assertThat(slept).as("the worker thread is interrupted").isInstanceOf(InterruptedException.class);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                    .isLessThan(RENEWED_TTL.toMillis() + 1000);
            assertThat(callback.await(5, TimeUnit.SECONDS)).isTrue();
            assertThat(guard.isValid()).isFalse();
            assertThatThrownBy(guard::checkValid)
                    .isSameAs(told.get())
                    .isInstanceOf(LeaseLostException.class)
                    .hasMessageContaining("found expired, taken over or broken at renewal")
                    .hasMessageContaining("broken by an operator");
            assertThat(told.get().refusal())
                    .hasValueSatisfying(
                            refusal -> assertThat(refusal.reason()).isEqualTo(LeaseNotHeldException.Reason.BROKEN));
            assertThat(told.get().token()).isEqualTo(lease.token());
            // checkValid() threw the loss already; close() does not throw it twice (see the try-with-resources test)
            assertThatCode(guard::close).doesNotThrowAnyException();
        }
    }

    /** Renewals that keep failing (the database unreachable) are a loss once the last confirmed grant runs out. */
    @DatabaseTest
    void renewalsFailingUntilExpiryAreALoss(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        AtomicBoolean broken = new AtomicBoolean();
        DataSource pool = db.newPool(2);
        DataSource flaky = (DataSource) Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    if (broken.get() && method.getName().equals("getConnection")) {
                        throw new SQLException("network down (test)", "08001");
                    }
                    try {
                        return method.invoke(pool, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        try (LeaseService leases = LeaseFixture.service(flaky, table)) {
            // A renewal (every ttl/3) fails well before the deadline, however late the machine runs it:
            // the loss then carries that failure as its cause.
            Lease lease = leases.tryAcquire("job", "worker", RENEWED_TTL).orElseThrow();
            AtomicReference<LeaseLostException> told = new AtomicReference<>();
            LeaseGuard guard = leases.keepAlive(lease, RENEWED_TTL, told::set);
            broken.set(true);
            long start = System.nanoTime();
            Throwable slept = catchThrowable(() -> Thread.sleep(10_000)); // works until the guard interrupts it
            long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(slept).isInstanceOf(InterruptedException.class);
            assertThat(waited)
                    .as("told no later than the TTL, plus scheduling")
                    .isLessThan(RENEWED_TTL.toMillis() + 1000);
            assertThat(guard.isValid()).isFalse();
            // the callback runs just after the interrupt
            await("the loss told to the callback")
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(10))
                    .until(() -> told.get() != null);
            assertThat(told.get()).hasMessageContaining("last confirmed expiry");
            assertThat(told.get().getCause()).isNotNull();
            broken.set(false);
            assertThatThrownBy(guard::close).isInstanceOf(LeaseLostException.class);
        }
    }

    @DatabaseTest
    void aLeaseThatExpiredBeforeKeepAliveIsRefused(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = LeaseFixture.service(db.dataSource(), table)) {
            Lease lease =
                    leases.tryAcquire("job", "worker", Duration.ofMillis(50)).orElseThrow();
            Thread.sleep(100); // the 50 ms TTL runs out
            assertThatThrownBy(() -> leases.keepAlive(lease, TTL, null)).isInstanceOf(LeaseExpiredException.class);
            assertThatThrownBy(() -> leases.keepAlive(lease, Duration.ofMillis(2), null))
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    /**
     * The javadoc's pattern: a loss seen by {@code checkValid()} inside try-with-resources reaches
     * the caller as that {@link LeaseLostException}, with nothing suppressed (close() does not throw
     * it a second time, which Java would turn into "Self-suppression not permitted").
     */
    @DatabaseTest
    void aLossSeenInsideTryWithResourcesSurfacesAsTheLeaseLostException(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = LeaseFixture.service(db.newPool(2), table);
                LeaseService operator = LeaseFixture.service(db.newPool(2), table)) {
            // The first renewal (at ttl/3) finds the lease broken well before the deadline, however late
            // the machine runs it: the loss then carries that refusal as its cause.
            Lease lease = leases.tryAcquire("job", "worker", RENEWED_TTL).orElseThrow();
            AtomicReference<LeaseLostException> told = new AtomicReference<>();
            CountDownLatch callback = new CountDownLatch(1);
            Throwable caught;
            try {
                try (LeaseGuard guard = leases.keepAlive(lease, RENEWED_TTL, e -> {
                    told.set(e);
                    callback.countDown();
                })) {
                    assertThat(operator.forceRelease("job")).isTrue();
                    awaitIgnoringInterrupts(callback);
                    guard.checkValid();
                }
                caught = null;
            } catch (Throwable t) {
                caught = t;
            } finally {
                Thread.interrupted(); // the guard interrupted this thread when it lost the lease
            }
            assertThat(caught).isInstanceOf(LeaseLostException.class).isSameAs(told.get());
            assertThat(caught.getSuppressed()).isEmpty();
            assertThat(caught.getCause()).as("the refused renewal says why").isInstanceOf(LeaseNotHeldException.class);
        }
    }

    /** Closing a lost guard whose loss the work never saw throws the loss (the work may have overlapped). */
    @DatabaseTest
    void closingALostGuardThrowsTheLossTheWorkDidNotSee(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = LeaseFixture.service(db.newPool(2), table);
                LeaseService operator = LeaseFixture.service(db.newPool(2), table)) {
            Lease lease = leases.tryAcquire("job", "worker", TTL).orElseThrow();
            CountDownLatch callback = new CountDownLatch(1);
            AtomicReference<LeaseLostException> told = new AtomicReference<>();
            LeaseGuard guard = leases.keepAlive(lease, TTL, e -> {
                told.set(e);
                callback.countDown();
            });
            assertThat(operator.forceRelease("job")).isTrue();
            awaitIgnoringInterrupts(callback);
            Thread.interrupted();
            assertThatThrownBy(guard::close).isSameAs(told.get());
        }
    }

    /** The guard interrupts this thread when it loses the lease, possibly while the test waits here. */
    private static void awaitIgnoringInterrupts(CountDownLatch latch) {
        assertThat(LeaseFixture.awaitIgnoringInterrupts(latch))
                .as("onLost was called")
                .isTrue();
    }
}
