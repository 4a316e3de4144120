package dev.holdfast.lease;

import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * MariaDB wake-ups: a release gives back a user-level lock (the name's "bell") that the waiting
 * services' wake-up connections sleep on. Waiters here poll every ten minutes, so a waiter gets the
 * lease within the test's bounds only if a wake-up told it to look; re-verifies what the design
 * relies on (a sleeping {@code GET_LOCK} returns when the holder gives the lock back or its session
 * ends) and that no user-level lock outlives the service or goes back to the pool.
 */
class LeaseMariaDbWakeUpTest {

    private static final Duration LONG = Duration.ofSeconds(30);
    /** How often the waiters of the tests that prove a wake-up poll, and how long they wait: far past any bound here. */
    private static final Duration POLL = Duration.ofMinutes(10);
    private static final String WAKE_UPS = "dev.holdfast.lease.internal.MariaDbWakeUps";

    private static LeaseService polledRarely(TestDatabase db, DataSource pool, String table) {
        return LeaseFixture.builder(db, pool).table(table).tune(t -> t.queuedPoll(POLL, POLL).safetyPoll(POLL).pollingQueueEntry(POLL.multipliedBy(3))).build();
    }

    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aReleaseWakesAWaiterOfAnotherServiceAtOnce(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        String bell;
        try (LeaseService a = LeaseFixture.service(db, db.newPool(2), table);
             LeaseService b = polledRarely(db, db.newPool(2), table)) {
            bell = a.probe().bellName("job");
            for (int round = 0; round < 3; round++) {
                Lease held = a.acquire("job", "a", LONG, LONG); // a waiting call's grant: its service rings the bell
                awaitBell(db, bell, true);
                CompletableFuture<Lease> waiter = LeaseFixture.lockAsync(b, "job", "b", LONG, POLL);
                awaitAsleep(b);
                a.release(held);
                Lease got = waiter.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS); // a poll would take five minutes at least
                assertThat(got.token()).isEqualTo(held.token() + 1);
                b.release(got);
            }
        }
        assertThat(bellHeld(db, bell)).as("no bell outlives the services").isFalse();
    }

    /** The wake-up connection is killed while it sleeps: logged once, replaced, and the next release wakes again. */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aKilledWakeUpConnectionIsLoggedOnceAndReplaced(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        List<LogRecord> records = capture();
        try (LeaseService a = LeaseFixture.service(db, db.newPool(2), table);
             LeaseService b = polledRarely(db, db.newPool(2), table)) {
            String bell = a.probe().bellName("job");
            Lease held = a.acquire("job", "a", LONG, LONG);
            awaitBell(db, bell, true);
            CompletableFuture<Lease> waiter = LeaseFixture.lockAsync(b, "job", "b", LONG, POLL);
            for (int kill = 0; kill < 2; kill++) {
                long sleeper = awaitSleeper(db, bell);
                db.execute("KILL " + sleeper);
                int n = kill;
                await("the sleeping connection replaced").atMost(LeaseFixture.AT_MOST).pollInterval(Duration.ofMillis(10))
                        .until(() -> warnings(records) == 1 && b.probe().wakeUpSleepsOn("job") && sleeperId(db, bell) != sleeper);
                assertThat(warnings(records)).as("kill %d: one warning per outage", n).isEqualTo(1);
                assertThat(records).as("resumed").anyMatch(r -> r.getMessage().contains("resumed"));
                records.clear(); // the next kill is an outage of its own
            }
            a.release(held);
            Lease got = waiter.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS);
            assertThat(got.token()).isEqualTo(held.token() + 1);
            b.release(got);
            awaitBell(db, bell, false); // the wake-up thread gives it back right after the release
        } finally {
            Logger.getLogger(WAKE_UPS).removeHandler(handler);
        }
    }

    /**
     * Every statement of the wake-up connection fails: one warning however often it retries, the
     * waiters poll (and get the lease), and once the statements work again the connection sleeps again.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aFailingWakeUpConnectionLeavesWaitersPollingAndRecovers(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        List<LogRecord> records = capture();
        AtomicBoolean failing = new AtomicBoolean(true);
        AtomicInteger failures = new AtomicInteger();
        DataSource pool = failingLockStatements(db.newPool(3), failing, failures);
        try (LeaseService a = LeaseFixture.service(db, db.newPool(2), table);
             LeaseService b = LeaseFixture.service(db, pool, table)) {
            String bell = a.probe().bellName("job");
            Lease held = a.acquire("job", "a", LONG, LONG);
            awaitBell(db, bell, true);
            CompletableFuture<Lease> waiter = LeaseFixture.lockAsync(b, "job", "b", LONG, LONG);
            await("three failed wake-up statements").atMost(LeaseFixture.AT_MOST).until(() -> failures.get() >= 3);
            a.release(held);
            Lease got = waiter.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS); // by polling
            assertThat(got.token()).isEqualTo(held.token() + 1);
            assertThat(warnings(records)).as("one warning for the outage").isEqualTo(1);
            // b holds it by waiting: a waits now, and b's statements work again
            failing.set(false);
            CompletableFuture<Lease> other = LeaseFixture.lockAsync(a, "job", "a", LONG, LONG);
            awaitAsleep(a); // on b's bell
            b.release(got);
            a.release(other.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS));
            await("b's wake-up connection recovered").atMost(LeaseFixture.AT_MOST)
                    .until(() -> records.stream().anyMatch(r -> r.getMessage().contains("resumed")));
        } finally {
            Logger.getLogger(WAKE_UPS).removeHandler(handler);
        }
    }

    /**
     * A granted waiter leaves the queue on its wake-up connection after its grant returned, and
     * always before its bell wakes the next service: a waiter that releases at once, while leaving
     * the queue takes 200 ms, never has its entry in the way of the next, whose first look after the
     * bell is then granted (otherwise it would wait for its next poll, ten minutes away); the next
     * service's connection never holds the bell while the entry is there.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aWaiterThatReleasesAtOnceHasLeftTheQueueBeforeItsBellRings(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        String leave = "DELETE FROM " + table + "_queue";
        try (LeaseService a = LeaseFixture.service(db, db.newPool(2), table);
             LeaseService b = polledRarely(db, delaying(db.newPool(2), leave, Duration.ofMillis(200)), table);
             LeaseService c = polledRarely(db, db.newPool(2), table)) {
            String bell = a.probe().bellName("job");
            List<String> violations = new CopyOnWriteArrayList<>();
            for (int round = 0; round < 3; round++) {
                Lease held = a.acquire("job", "a", LONG, LONG);
                awaitBell(db, bell, true);
                long aConnection = db.queryLong("SELECT IS_USED_LOCK(?)", bell);
                CompletableFuture<Lease> first = new CompletableFuture<>();
                Thread releasingAtOnce = new Thread(() -> {
                    try {
                        Lease got = b.acquire("job", "b", LONG, POLL);
                        long entries = db.queryLong("SELECT COUNT(*) FROM " + table + "_queue");
                        b.release(got); // at once, while its entry is still being left
                        if (entries != 2) {
                            violations.add("the grant waited for its entry to be left: " + entries + " entries");
                        }
                        first.complete(got);
                    } catch (Throwable e) {
                        first.completeExceptionally(e);
                    }
                }, "test-lock-b");
                releasingAtOnce.start();
                LeaseFixture.awaitQueued(db, table, 1);
                awaitAsleep(b);
                long bConnection = awaitSleeper(db, bell);
                CompletableFuture<Lease> second = LeaseFixture.lockAsync(c, "job", "c", LONG, POLL);
                LeaseFixture.awaitQueued(db, table, 2);
                awaitAsleep(c);
                a.release(held);
                int n = round;
                await("c granted").atMost(LeaseFixture.AT_MOST).pollInterval(Duration.ofMillis(2)).until(() -> {
                    long holder = db.queryLong("SELECT COALESCE(IS_USED_LOCK(?), 0)", bell);
                    long entries = db.queryLong("SELECT COUNT(*) FROM " + table + "_queue");
                    if (holder != 0 && holder != aConnection && holder != bConnection && entries == 2) {
                        violations.add("round " + n + ": connection " + holder + " holds the bell beside b's entry");
                    }
                    return second.isDone();
                });
                Lease toB = first.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS);
                Lease toC = second.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS);
                assertThat(toB.token()).isEqualTo(held.token() + 1);
                assertThat(toC.token()).isEqualTo(toB.token() + 1);
                c.release(toC);
                LeaseFixture.awaitQueued(db, table, 0);
            }
            assertThat(violations).isEmpty();
        }
    }

    /**
     * A waiter granted by a look of its own (the lease force-released: no bell rang) keeps the bell
     * that reaches its service's sleeping connection afterwards: given back, it would go to the next
     * sleeper, whose waiter would look in vain (and the sleepers would queue in a new order).
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aWaiterGrantedByItsOwnLookKeepsTheBellThatReachesItAfterwards(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        AtomicInteger looksOfC = new AtomicInteger();
        try (LeaseService a = LeaseFixture.service(db, db.newPool(2), table);
             LeaseService b = LeaseFixture.builder(db, db.newPool(2)).table(table)
                     .tune(t -> t.queuedPoll(Duration.ofMillis(5), Duration.ofMillis(5))).build(); // looks every 50 ms
             LeaseService c = polledRarely(db, beforePreparing(db.newPool(2), "INSERT INTO " + table + " (name, owner, token",
                     looksOfC::incrementAndGet), table);
             LeaseService operator = LeaseFixture.service(db, db.newPool(2), table)) {
            String bell = a.probe().bellName("job");
            Lease held = a.acquire("job", "a", LONG, LONG); // a's wake-up connection holds the bell
            awaitBell(db, bell, true);
            CompletableFuture<Lease> first = LeaseFixture.lockAsync(b, "job", "b", LONG, LONG);
            LeaseFixture.awaitQueued(db, table, 1);
            awaitAsleep(b);
            long bConnection = awaitSleeper(db, bell);
            CompletableFuture<Lease> second = LeaseFixture.lockAsync(c, "job", "c", LONG, POLL);
            LeaseFixture.awaitQueued(db, table, 2);
            awaitAsleep(c);
            // c's first attempt, and the look by which it published its wake-up connection once that was there.
            LeaseFixture.awaitPublished(db, table, 2);
            int looksBefore = looksOfC.get();
            assertThat(looksBefore).as("c's attempts before the force-release").isBetween(1, 2);
            assertThat(operator.forceRelease("job")).isTrue(); // rings no bell
            Lease toB = first.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS); // b's own look
            assertThat(toB.token()).isEqualTo(held.token() + 1);
            assertThat(catchThrowable(() -> a.release(held))).as("broken: not held any more; a's bell goes back all the same")
                    .isInstanceOf(LeaseNotHeldException.class);
            await("b's wake-up connection holds the bell").atMost(LeaseFixture.AT_MOST).pollInterval(Duration.ofMillis(5))
                    .until(() -> db.queryLong("SELECT COALESCE(IS_USED_LOCK(?), 0)", bell) == bConnection);
            assertThat(looksOfC.get()).as("c was not rung while b holds the lease").isEqualTo(looksBefore);
            b.release(toB);
            Lease toC = second.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS);
            assertThat(toC.token()).isEqualTo(toB.token() + 1);
            c.release(toC);
        }
    }

    /**
     * The wake-up connection cannot leave a granted waiter's entry (its statements fail): the grant
     * is the caller's all the same, and the entry is left on a pooled connection once statements work
     * again, long before it would have lapsed (in thirty minutes).
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void anEntryTheWakeUpConnectionCannotLeaveIsLeftOnAPooledConnection(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        AtomicBoolean failing = new AtomicBoolean(true);
        AtomicInteger failures = new AtomicInteger();
        try (LeaseService a = LeaseFixture.service(db, db.newPool(2), table);
             LeaseService b = polledRarely(db, failing(db.newPool(3), "DELETE FROM " + table + "_queue", failing, failures),
                     table)) {
            Lease held = a.acquire("job", "a", LONG, LONG);
            CompletableFuture<Lease> waiter = LeaseFixture.lockAsync(b, "job", "b", LONG, POLL);
            LeaseFixture.awaitQueued(db, table, 1);
            awaitAsleep(b);
            a.release(held);
            Lease got = waiter.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS);
            assertThat(got.token()).as("granted while its entry cannot be left").isEqualTo(held.token() + 1);
            await("attempts to leave the entry").atMost(LeaseFixture.AT_MOST).until(() -> failures.get() >= 3);
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + "_queue")).as("b's entry, not left").isOne();
            failing.set(false);
            LeaseFixture.awaitQueued(db, table, 0);
            b.release(got);
        }
    }

    /**
     * Pools of one and two connections: the wake-up connection never takes the one a statement needs
     * (a pool of one has none to spare, and its waiters poll), and no bell is left behind.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void tinyPoolsStillHandTheLeaseOnAndLeaveNoLock(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        String bell;
        try (LeaseService a = LeaseFixture.service(db, db.newPool(1), table);
             LeaseService b = LeaseFixture.service(db, db.newPool(1), table);
             LeaseService c = LeaseFixture.service(db, db.newPool(2), table)) {
            bell = a.probe().bellName("job");
            handOffs(List.of(a, b, c), 30);
        }
        assertThat(bellHeld(db, bell)).isFalse();
    }

    /**
     * Four services of two connections each hand one name around with 1 ms holds: every grant
     * exclusive (an independent check: a holder count that must never exceed one) and in token order.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void servicesHandOneNameAroundExclusivelyAndInTokenOrder(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        List<LeaseService> services = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                services.add(LeaseFixture.service(db, db.newPool(2), table));
            }
            handOffs(services, 40);
        } finally {
            services.forEach(LeaseService::close);
        }
        assertThat(bellHeld(db, services.get(0).probe().bellName("job"))).as("no bell outlives the services").isFalse();
    }

    private static void handOffs(List<LeaseService> services, int each) throws Exception {
        AtomicInteger holders = new AtomicInteger();
        AtomicLong lastToken = new AtomicLong();
        AtomicReference<String> violation = new AtomicReference<>();
        ConcurrentHashMap<Integer, Integer> grants = new ConcurrentHashMap<>();
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int i = 0; i < services.size(); i++) {
            LeaseService leases = services.get(i);
            int worker = i;
            workers.add(CompletableFuture.runAsync(() -> {
                for (int n = 0; n < each; n++) {
                    try {
                        Lease lease = leases.acquire("job", "w" + worker, LONG, LONG);
                        if (holders.incrementAndGet() != 1) {
                            violation.compareAndSet(null, "two holders at once");
                        }
                        if (lease.token() <= lastToken.getAndSet(lease.token())) {
                            violation.compareAndSet(null, "token " + lease.token() + " not after the last");
                        }
                        grants.merge(worker, 1, Integer::sum);
                        Thread.sleep(1);
                        holders.decrementAndGet();
                        leases.release(lease);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException(e);
                    }
                }
            }, java.util.concurrent.Executors.newSingleThreadExecutor()));
        }
        CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(2, TimeUnit.MINUTES);
        assertThat(violation.get()).isNull();
        assertThat(grants.values()).containsOnly(each);
    }

    private static volatile Handler handler;

    private static List<LogRecord> capture() {
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                records.add(record);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        Logger.getLogger(WAKE_UPS).addHandler(handler);
        return records;
    }

    private static long warnings(List<LogRecord> records) {
        return records.stream().filter(r -> r.getLevel() == Level.WARNING).count();
    }

    /** Waits until {@code service}'s wake-up connection sleeps on the bell of "job". */
    private static void awaitAsleep(LeaseService service) {
        await("the wake-up connection sleeps on the bell").atMost(LeaseFixture.AT_MOST)
                .pollInterval(Duration.ofMillis(5)).until(() -> service.probe().wakeUpSleepsOn("job"));
    }

    private static boolean bellHeld(TestDatabase db, String bell) throws SQLException {
        return db.queryLong("SELECT IS_USED_LOCK(?) IS NOT NULL", bell) == 1;
    }

    private static void awaitBell(TestDatabase db, String bell, boolean held) {
        await("the bell " + (held ? "held" : "free")).atMost(LeaseFixture.AT_MOST).pollInterval(Duration.ofMillis(5))
                .until(() -> bellHeld(db, bell) == held);
    }

    /** The connection id of the session that sleeps on {@code bell}, or -1. */
    private static long sleeperId(TestDatabase db, String bell) throws SQLException {
        return db.queryLong("SELECT COALESCE(MAX(ID), -1) FROM information_schema.PROCESSLIST WHERE INFO LIKE ?",
                "%GET_LOCK('" + bell + "'%");
    }

    private static long awaitSleeper(TestDatabase db, String bell) {
        AtomicLong id = new AtomicLong(-1);
        await("a session sleeping on the bell").atMost(LeaseFixture.AT_MOST).pollInterval(Duration.ofMillis(5))
                .until(() -> {
                    id.set(sleeperId(db, bell));
                    return id.get() >= 0;
                });
        return id.get();
    }

    /** A pool whose user-level lock statements fail (as on a connection the server dropped) while {@code failing}. */
    private static DataSource failingLockStatements(DataSource pool, AtomicBoolean failing, AtomicInteger failures) {
        return failing(pool, "_LOCK", failing, failures);
    }

    /** A pool whose statements containing {@code text} fail (as on a connection the server dropped) while {@code failing}. */
    private static DataSource failing(DataSource pool, String text, AtomicBoolean failing, AtomicInteger failures) {
        return beforePreparing(pool, text, () -> {
            if (failing.get()) {
                failures.incrementAndGet();
                throw new SQLException("connection reset (test)", "08S01");
            }
        });
    }

    /** A pool whose statements containing {@code text} are prepared only after {@code delay}: slow statements, injected. */
    private static DataSource delaying(DataSource pool, String text, Duration delay) {
        return beforePreparing(pool, text, () -> Thread.sleep(delay.toMillis()));
    }

    /** Something done before a statement is prepared. */
    private interface Injected {
        void run() throws Exception;
    }

    /** A pool whose connections run {@code injected} before preparing a statement that contains {@code text}. */
    private static DataSource beforePreparing(DataSource pool, String text, Injected injected) {
        return (DataSource) Proxy.newProxyInstance(LeaseMariaDbWakeUpTest.class.getClassLoader(),
                new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    Object result = invoke(pool, method, args);
                    if (!(result instanceof Connection c)) {
                        return result;
                    }
                    return Proxy.newProxyInstance(LeaseMariaDbWakeUpTest.class.getClassLoader(), new Class<?>[] {Connection.class},
                            (p, m, a) -> {
                                if (m.getName().equals("prepareStatement") && a[0] instanceof String sql && sql.contains(text)) {
                                    injected.run();
                                }
                                return invoke(c, m, a);
                            });
                });
    }

    private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
