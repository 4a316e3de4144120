package dev.holdfast.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@link LeaseGuard}'s deadline fires by itself, whatever its renewals are stuck on: the
 * worker is interrupted and {@code onLost} called although every renewal is still blocked.
 * Two guards, so that two stuck renewals would occupy a two-thread scheduler.
 */
class LeaseGuardDeadlineTest {

    private static final Duration TTL = Duration.ofSeconds(1);
    /** Deadline is at most TTL after the last successful renewal; this is the generous margin on top. */
    private static final long TOLD_WITHIN_MILLIS = TTL.toMillis() + 3000;

    /** A worker thread that acquires {@code name}, keeps it alive and sleeps until interrupted. */
    private static final class Worker {
        final CountDownLatch guarded = new CountDownLatch(1);
        final CompletableFuture<Long> interruptedAt = new CompletableFuture<>();
        final CompletableFuture<Long> lostAt = new CompletableFuture<>();
        final AtomicReference<LeaseGuard> guard = new AtomicReference<>();
        final Thread thread;

        /** Each {@code onLost} blocks until {@code callbacksMayReturn}: a callback must not hold up other deadlines. */
        Worker(LeaseService leases, String name, CountDownLatch callbacksMayReturn) {
            thread = new Thread(
                    () -> {
                        try {
                            Lease lease = leases.tryAcquire(name, "worker-" + name, TTL)
                                    .orElseThrow();
                            guard.set(leases.keepAlive(lease, TTL, e -> {
                                lostAt.complete(System.nanoTime());
                                try {
                                    callbacksMayReturn.await();
                                } catch (InterruptedException ignored) {
                                    Thread.currentThread().interrupt();
                                }
                            }));
                            guarded.countDown();
                            Thread.sleep(60_000); // the work under the lease, until the guard interrupts it
                            interruptedAt.completeExceptionally(new AssertionError("not interrupted"));
                        } catch (InterruptedException e) {
                            interruptedAt.complete(System.nanoTime());
                        } catch (Throwable t) {
                            interruptedAt.completeExceptionally(t);
                        }
                    },
                    "test-worker-" + name);
            thread.start();
        }

        void assertToldBy(long stuckSince) throws Exception {
            long interrupted = interruptedAt.get(30, TimeUnit.SECONDS);
            long lost = lostAt.get(30, TimeUnit.SECONDS);
            assertThat(TimeUnit.NANOSECONDS.toMillis(interrupted - stuckSince))
                    .as("worker interrupted by the deadline")
                    .isLessThan(TOLD_WITHIN_MILLIS);
            assertThat(TimeUnit.NANOSECONDS.toMillis(lost - stuckSince))
                    .as("onLost called by the deadline")
                    .isLessThan(TOLD_WITHIN_MILLIS);
            assertThat(guard.get().isValid()).isFalse();
        }
    }

    @DatabaseTest
    void theDeadlineFiresWhileRenewalsWaitForAnExhaustedPool(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        CountDownLatch callbacksMayReturn = new CountDownLatch(1);
        HikariDataSource pool = db.newPool(1); // connectionTimeout 10 s: renewals wait that long
        try (LeaseService leases =
                LeaseService.builder(pool).dialect(dialect(db)).table(table).build()) {
            List<Worker> workers = new ArrayList<>();
            for (String name : List.of("job-1", "job-2")) {
                Worker w = new Worker(leases, name, callbacksMayReturn);
                assertThat(w.guarded.await(10, TimeUnit.SECONDS)).isTrue();
                workers.add(w);
            }
            try (Connection held = pool.getConnection()) {
                long stuckSince = System.nanoTime();
                for (Worker w : workers) {
                    w.assertToldBy(stuckSince);
                }
                assertThat(pool.getHikariPoolMXBean().getThreadsAwaitingConnection())
                        .as("renewals are still waiting for the pool")
                        .isGreaterThan(0);
                // 10 s: pgjdbc closes a connection whose check runs out, and on a loaded machine 1 s once did
                assertThat(held.isValid(10))
                        .as("the connection the test holds still answers")
                        .isTrue();
            }
            callbacksMayReturn.countDown();
            for (Worker w : workers) {
                w.thread.join(5000);
            }
        }
    }

    @DatabaseTest
    void theDeadlineFiresWhileRenewalsWaitForARowLock(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        CountDownLatch callbacksMayReturn = new CountDownLatch(1);
        try (LeaseService leases = LeaseService.builder(db.newPool(4))
                .dialect(dialect(db))
                .table(table)
                .build()) {
            List<Worker> workers = new ArrayList<>();
            for (String name : List.of("job-1", "job-2")) {
                Worker w = new Worker(leases, name, callbacksMayReturn);
                assertThat(w.guarded.await(10, TimeUnit.SECONDS)).isTrue();
                workers.add(w);
            }
            try (Connection locker = db.newPool(1).getConnection()) {
                locker.setAutoCommit(false);
                try (PreparedStatement ps = locker.prepareStatement("SELECT name FROM " + table + " FOR UPDATE");
                        ResultSet rs = ps.executeQuery()) {
                    int rows = 0;
                    while (rs.next()) {
                        rows++;
                    }
                    assertThat(rows).isEqualTo(2);
                }
                long stuckSince = System.nanoTime();
                for (Worker w : workers) {
                    w.assertToldBy(stuckSince);
                }
                // The row locks are still held here: the renewals could not have got through.
                locker.rollback();
            }
            callbacksMayReturn.countDown();
            for (Worker w : workers) {
                w.thread.join(5000);
            }
        }
    }

    private static dev.holdfast.jdbc.dialect.Dialect dialect(TestDatabase db) {
        return switch (db.kind()) {
            case H2 -> dev.holdfast.jdbc.dialect.Dialect.H2;
            case POSTGRESQL -> dev.holdfast.jdbc.dialect.Dialect.POSTGRESQL;
            case MARIADB -> dev.holdfast.jdbc.dialect.Dialect.MARIADB;
        };
    }
}
