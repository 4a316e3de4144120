package dev.holdfast.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/** {@link LeaseService#acquire}'s bound holds whatever the pool does. */
class LeaseLockBoundTest {

    private static final Duration LONG = Duration.ofSeconds(30);

    /**
     * Defect 10: the first {@code lock} on a service, on a pool exhausted for longer than its bound,
     * ends at its bound (not when a connection for the listener or the attempt finally comes).
     */
    @DatabaseTest
    void theFirstLockOnAnExhaustedPoolEndsAtItsBound(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        HikariDataSource pool = db.newPool(2); // connectionTimeout 10 s
        try (LeaseService a = LeaseFixture.service(db.newPool(2), table);
                LeaseService b = LeaseFixture.service(pool, table)) {
            assertThat(a.tryAcquire("job", "a", LONG)).isPresent();
            List<Connection> taken = new ArrayList<>();
            taken.add(pool.getConnection());
            taken.add(pool.getConnection());
            try {
                long start = System.nanoTime();
                Throwable thrown = catchThrowable(() -> b.acquire("job", "b", LONG, Duration.ofSeconds(1)));
                long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertThat(thrown).isInstanceOf(LeaseTimeoutException.class);
                assertThat(took).as("a 1 s bound ends before 2.5 s").isLessThan(2500);
            } finally {
                for (Connection c : taken) {
                    c.close();
                }
            }
            // The pool recovers: nothing leaked (attempts that were still borrowing give their connections
            // back), the next lock works as usual.
            awaitConnectionsBack(pool);
            // at most the listener (its probe's notifier gives its connection back right after it sent)
            await().atMost(LeaseFixture.AT_MOST)
                    .until(() -> pool.getHikariPoolMXBean().getActiveConnections() <= 1);
            Throwable again = catchThrowable(() -> b.acquire("job", "b", LONG, Duration.ofMillis(300)));
            assertThat(again).isInstanceOf(LeaseTimeoutException.class);
        }
    }

    /**
     * Review finding 1: a bound too short for a background thread to fetch a pooled connection
     * still makes one attempt (it used to throw "(0 attempts)" on a free name).
     */
    @DatabaseTest
    void aShortBoundOnAFreeLeaseStillMakesAnAttempt(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = LeaseFixture.service(db.newPool(4), table)) {
            List<String> refusals = new ArrayList<>();
            // each call may take its connection up to BORROW_GRACE (100 ms) late: 20 calls, not 200,
            // so that a stall of the machine is unlikely to hit one (the bug failed every call)
            for (int i = 0; i < 20; i++) {
                try {
                    leases.release(leases.acquire("job-" + i, "a", LONG, Duration.ofMillis(2)));
                } catch (LeaseTimeoutException e) {
                    refusals.add(e.getMessage());
                }
            }
            // The bug failed every call; a call whose connection came more than 0.1 s late (a stall of a
            // loaded machine) is refused by design.
            assertThat(refusals).as("lock(free name, maxWait 2 ms) refusals").hasSizeLessThanOrEqualTo(2);
        }
    }

    /**
     * Review finding 1: the last attempt is made at the bound. The holder's grant expires after
     * 1 s and nothing wakes the waiter (safety poll a minute, no release): it must get the lease
     * by its final attempt at the 3 s bound instead of failing without checking again.
     */
    @DatabaseTest
    void aLeaseThatExpiredBeforeTheBoundIsGrantedByTheLastAttempt(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService a = LeaseFixture.service(db.newPool(2), table);
                LeaseService b = LeaseService.builder(db.newPool(4))
                        .table(table)
                        .tune(t -> t.safetyPoll(Duration.ofMinutes(1)))
                        .build()) {
            assertThat(a.tryAcquire("job", "a", Duration.ofSeconds(1))).isPresent();
            Lease granted = b.acquire("job", "b", LONG, Duration.ofSeconds(3));
            assertThat(granted.owner()).isEqualTo("b");
            assertThat(b.find("job").orElseThrow().token()).isEqualTo(granted.token());
        }
    }

    /**
     * Review finding 2: a waiter that has queued (PostgreSQL) and then finds the pool exhausted
     * ends at its bound; leaving the queue must not wait for the pool's own 10 s timeout.
     */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void aQueuedWaiterOnAnExhaustedPoolEndsAtItsBound(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        HikariDataSource pool = db.newPool(3); // connectionTimeout 10 s
        try (LeaseService a = LeaseFixture.service(db.newPool(2), table);
                LeaseService b = LeaseFixture.service(pool, table)) {
            assertThat(a.tryAcquire("job", "a", LONG)).isPresent();
            long start = System.nanoTime();
            CompletableFuture<Lease> w = lockAsync(b, "job", "b", Duration.ofSeconds(3), new AtomicReference<>());
            LeaseFixture.awaitQueued(db, table, 1);
            // the listener settled: it listens (keeping a connection), or found a pooler (and gives its back)
            await().atMost(LeaseFixture.AT_MOST)
                    .until(() -> b.probe().listening() || b.probe().listenerBehindPooler());
            List<Connection> taken = new ArrayList<>();
            for (int i = b.probe().listening() ? 1 : 0; i < 3; i++) {
                taken.add(pool.getConnection()); // a polling waiter's attempt gives its connection back soon
            }
            assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isEqualTo(3);
            Throwable thrown;
            try {
                thrown = w.handle((l, e) -> e).get(60, TimeUnit.SECONDS);
            } finally {
                for (Connection c : taken) {
                    c.close();
                }
            }
            long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(thrown).isInstanceOf(LeaseTimeoutException.class);
            assertThat(took).as("a 3 s bound ends before 5 s").isLessThan(5000);
        }
    }

    /**
     * Review finding 2: an interrupted waiter that has queued (PostgreSQL) ends at once on an
     * exhausted pool, instead of after the pool's 10 s timeout spent leaving the queue.
     */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void aQueuedWaiterInterruptedOnAnExhaustedPoolEndsAtOnce(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        HikariDataSource pool = db.newPool(3); // connectionTimeout 10 s
        try (LeaseService a = LeaseFixture.service(db.newPool(2), table);
                LeaseService b = LeaseFixture.service(pool, table)) {
            assertThat(a.tryAcquire("job", "a", LONG)).isPresent();
            AtomicReference<Thread> thread = new AtomicReference<>();
            CompletableFuture<Lease> w = lockAsync(b, "job", "b", Duration.ofSeconds(25), thread);
            LeaseFixture.awaitQueued(db, table, 1);
            // the listener settled: it listens (keeping a connection), or found a pooler (and gives its back)
            await().atMost(LeaseFixture.AT_MOST)
                    .until(() -> b.probe().listening() || b.probe().listenerBehindPooler());
            List<Connection> taken = new ArrayList<>();
            for (int i = b.probe().listening() ? 1 : 0; i < 3; i++) {
                taken.add(pool.getConnection()); // a polling waiter's attempt gives its connection back soon
            }
            assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isEqualTo(3);
            // the waiter's next attempt (safety poll 0.5 s) now waits for a connection
            await("the waiter waiting for a connection of the exhausted pool")
                    .atMost(LeaseFixture.AT_MOST)
                    .pollInterval(Duration.ofMillis(10))
                    .until(() -> pool.getHikariPoolMXBean().getThreadsAwaitingConnection() >= 1);
            long interrupted = System.nanoTime();
            thread.get().interrupt();
            Throwable thrown;
            try {
                thrown = w.handle((l, e) -> e).get(60, TimeUnit.SECONDS);
            } finally {
                for (Connection c : taken) {
                    c.close();
                }
            }
            long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - interrupted);
            assertThat(thrown).isInstanceOf(InterruptedException.class);
            assertThat(took)
                    .as("an interrupt ends lock() well before the pool's 10 s timeout")
                    .isLessThan(3000);
        }
    }

    private static CompletableFuture<Lease> lockAsync(
            LeaseService leases, String name, String owner, Duration wait, AtomicReference<Thread> thread) {
        CompletableFuture<Lease> result = new CompletableFuture<>();
        Thread t = new Thread(
                () -> {
                    try {
                        result.complete(leases.acquire(name, owner, LONG, wait));
                    } catch (Throwable e) {
                        result.completeExceptionally(e);
                    }
                },
                "test-lock-" + owner);
        thread.set(t);
        t.start();
        return result;
    }

    /** Waits until every connection but the listener's is back in {@code pool}. */
    private static void awaitConnectionsBack(HikariDataSource pool) {
        await("every connection but the listener's back in the pool")
                .atMost(LeaseFixture.AT_MOST)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(10))
                .until(() -> pool.getHikariPoolMXBean().getActiveConnections() <= 1);
    }

    /**
     * Takes every connection the pool has left: all but the one its listener keeps. (Counting the active
     * ones first raced with a waiter's attempt, which holds one for a moment: a getConnection during that
     * attempt waits for it to come back.)
     */
    private static List<Connection> exhaust(HikariDataSource pool, int size) throws Exception {
        awaitConnectionsBack(pool);
        List<Connection> taken = new ArrayList<>();
        for (int i = 1; i < size; i++) {
            taken.add(pool.getConnection());
        }
        assertThat(pool.getHikariPoolMXBean().getActiveConnections())
                .as("the listener's and ours")
                .isEqualTo(size);
        return taken;
    }
}
