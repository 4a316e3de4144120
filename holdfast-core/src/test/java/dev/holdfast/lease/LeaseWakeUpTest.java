package dev.holdfast.lease;

import dev.holdfast.LockWaits;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Wake-ups of blocked {@link LeaseService#acquire} callers on PostgreSQL, with the safety poll set to
 * a minute, so that a waiter gets the lease within the test's bounds only if a notification woke it.
 */
class LeaseWakeUpTest {

    private static final Duration LONG = Duration.ofSeconds(30);

    /**
     * Services that spell one table differently (case, schema) still wake each other's waiters: the
     * channels are made from the table PostgreSQL resolves, not from the spelling. Every pair of four
     * spellings, for a short name and for one long enough that its stem is hashed. The waiter's safety
     * poll is a minute, so it gets the lease within the bound only through the hand-off's notification.
     */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void servicesThatSpellOneTableDifferentlyWakeEachOthersWaiters(TestDatabase db) throws Exception {
        String shortName = LeaseFixture.install(db);
        String longName = db.newTableName("lease_spelled_long_enough_to_be_hashed");
        db.dropAfterTest(longName + "_queue");
        new SchemaInstaller(db.dataSource()).install(HoldfastTable.LEASES, longName);
        List<Long> wakeUpMicros = new ArrayList<>();
        DataSource releasingPool = db.newPool(2);
        DataSource waitingPool = db.newPool(2); // two pools for every pair: a pool each would exhaust the server
        for (String table : List.of(shortName, longName)) {
            String upper = table.toUpperCase(Locale.ROOT);
            List<String> spellings = List.of(table, upper, "public." + table, "PUBLIC." + upper);
            for (String releasing : spellings) {
                for (String waiting : spellings) {
                    String pair = releasing + " releases to " + waiting;
                    try (LeaseService a = LeaseFixture.builder(db, releasingPool)
                                    .table(releasing)
                                    .build();
                            LeaseService b = LeaseFixture.builder(db, waitingPool)
                                    .table(waiting)
                                    .tune(t -> t.safetyPoll(Duration.ofMinutes(1)))
                                    .build()) {
                        Lease held = a.tryAcquire("job", "a", LONG).orElseThrow();
                        // b's listener listens before its waiter starts, so that the waiter sleeps on the
                        // notification (a waiter that starts first polls until then, and would find the
                        // handed lease by its own attempt, whatever the channel)
                        LeaseFixture.startListener(b, "job");
                        CompletableFuture<Lease> waiter =
                                LeaseFixture.lockAsync(b, "job", "b", LONG, Duration.ofSeconds(30));
                        LeaseFixture.awaitListenedEntry(db, table);
                        long released = System.nanoTime();
                        a.release(held);
                        Lease got = waiter.get(10, TimeUnit.SECONDS);
                        wakeUpMicros.add((System.nanoTime() - released) / 1000);
                        assertThat(got.token()).as(pair).isEqualTo(held.token() + 1);
                        assertThat(b.probe().handOffsReceived())
                                .as(pair + ": handed the lease by the notification")
                                .isEqualTo(1);
                        b.release(got);
                    }
                }
            }
        }
        Collections.sort(wakeUpMicros);
        System.out.printf(
                "[%s] wake-ups across spellings of one table: %d, median %d µs, max %d µs%n",
                db.id(),
                wakeUpMicros.size(),
                wakeUpMicros.get(wakeUpMicros.size() / 2),
                wakeUpMicros.get(wakeUpMicros.size() - 1));
    }

    /** Defect 8: a name outside the BMP (two UTF-16 units for one character) is notified too. */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void aNameOutsideTheBmpIsWokenByTheRelease(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        String name = "job-\uD83D\uDE00"; // job-😀
        try (LeaseService a = LeaseFixture.service(db, db.newPool(2), table);
                LeaseService b = LeaseFixture.builder(db, db.newPool(2))
                        .table(table)
                        .tune(t -> t.safetyPoll(Duration.ofMinutes(1)))
                        .build()) {
            Lease held = a.tryAcquire(name, "a", LONG).orElseThrow();
            CompletableFuture<Lease> waiting = LeaseFixture.lockAsync(b, name, "b", LONG, Duration.ofSeconds(20));
            LeaseFixture.awaitListenedEntry(db, table); // queued with its listener: the release hands it the lease
            a.release(held);
            Lease got = waiting.get(5, TimeUnit.SECONDS);
            assertThat(got.token()).isEqualTo(held.token() + 1);
            b.release(got);
        }
    }

    /**
     * Defect 7: the release waits for the row lock of a failing queued attempt (the waiter's own
     * statement, still uncommitted); once that commits, the release must see the new queue entry
     * and notify it. The waiter's pool hands out manual-commit connections whose first commit the
     * test holds back until the release is seen waiting for the row lock.
     */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void aReleaseBlockedBehindAQueueingAttemptStillWakesThatWaiter(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        CountDownLatch attemptWaitsToCommit = new CountDownLatch(1);
        CountDownLatch releaseIsBlocked = new CountDownLatch(1);
        AtomicBoolean first = new AtomicBoolean(true);
        DataSource heldBack = commitHeldBack(db.newPool(3), first, attemptWaitsToCommit, releaseIsBlocked);
        try (LeaseService a = LeaseFixture.service(db, db.newPool(2), table);
                LeaseService b = LeaseFixture.builder(db, heldBack)
                        .table(table)
                        .tune(t -> t.safetyPoll(Duration.ofMinutes(1)))
                        .build()) {
            Lease held = a.tryAcquire("job", "a", LONG).orElseThrow();
            CompletableFuture<Lease> waiting = LeaseFixture.lockAsync(b, "job", "b", LONG, Duration.ofSeconds(20));
            assertThat(attemptWaitsToCommit.await(10, TimeUnit.SECONDS))
                    .as("b's failing attempt ran")
                    .isTrue();
            CompletableFuture<Void> release = CompletableFuture.runAsync(() -> a.release(held));
            awaitBlockedOnLock(db, table);
            releaseIsBlocked.countDown(); // b's attempt commits its queue entry; then the release goes on
            release.get(10, TimeUnit.SECONDS);
            long released = System.nanoTime();
            Lease got = waiting.get(10, TimeUnit.SECONDS);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - released))
                    .as("woken by the release, not by the one-minute poll")
                    .isLessThan(5000);
            assertThat(got.token()).isEqualTo(held.token() + 1);
            b.release(got);
        }
    }

    private static DataSource commitHeldBack(
            DataSource pool, AtomicBoolean first, CountDownLatch waiting, CountDownLatch mayCommit) {
        return (DataSource) Proxy.newProxyInstance(
                LeaseWakeUpTest.class.getClassLoader(), new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    Object result;
                    try {
                        result = method.invoke(pool, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                    // Not the listener's connections: neither its own nor the one its probe notifies on (under load
                    // the probe's commit came first, was held back, and the attempt's never was).
                    String thread = Thread.currentThread().getName();
                    if (!(result instanceof Connection c)
                            || thread.startsWith("holdfast-lease-listener")
                            || thread.startsWith("holdfast-lease-probe")) {
                        return result;
                    }
                    c.setAutoCommit(false);
                    return Proxy.newProxyInstance(
                            LeaseWakeUpTest.class.getClassLoader(), new Class<?>[] {Connection.class}, (p, m, a) -> {
                                if (m.getName().equals("commit") && first.compareAndSet(true, false)) {
                                    waiting.countDown();
                                    if (!mayCommit.await(20, TimeUnit.SECONDS)) {
                                        throw new AssertionError("the release was never seen blocked");
                                    }
                                }
                                try {
                                    return m.invoke(c, a);
                                } catch (InvocationTargetException e) {
                                    throw e.getCause();
                                }
                            });
                });
    }

    /**
     * Review finding 3: two concurrent {@code lock} calls by one owner queue as two waiters. The
     * second one giving up must not remove the first one's entry or take its wake-up: the release
     * still wakes the first (safety poll a minute, so only the notification can hand it over in time).
     */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void aSameOwnerWaiterGivingUpDoesNotCostTheOtherItsWakeUp(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService a = LeaseFixture.service(db, db.newPool(2), table);
                LeaseService b = LeaseFixture.builder(db, db.newPool(4))
                        .table(table)
                        .tune(t -> t.safetyPoll(Duration.ofMinutes(1)))
                        .build()) {
            Lease held = a.tryAcquire("job", "a", LONG).orElseThrow();
            CompletableFuture<Lease> first = LeaseFixture.lockAsync(b, "job", "x", LONG, Duration.ofSeconds(20));
            LeaseFixture.awaitQueued(db, table, 1);
            assertThatThrownBy(() -> b.acquire("job", "x", LONG, Duration.ofMillis(500)))
                    .isInstanceOf(LeaseTimeoutException.class);
            LeaseFixture.awaitQueued(db, table, 1); // the second call's entry is gone, the first one's stays
            a.release(held);
            Lease granted = first.get(5, TimeUnit.SECONDS);
            assertThat(granted.owner()).isEqualTo("x");
        }
    }

    private static void awaitBlockedOnLock(TestDatabase db, String table) {
        LockWaits.awaitWaitingForALock(db, "UPDATE " + table + " %", 1); // the release waits for the row lock
    }
}
