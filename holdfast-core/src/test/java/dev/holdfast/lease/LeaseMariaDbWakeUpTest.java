package dev.holdfast.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.LockWaits;
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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
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
import static org.awaitility.Awaitility.await;

/**
 * MariaDB wake-ups: a release that hands the lease to a waiter of another service ends the sleep of
 * that service's wake-up connection ({@code KILL QUERY}), which reads the grant and gives it to the
 * waiting call. Waiters here poll every ten minutes, so a waiter gets the lease within the test's
 * bounds only if it was handed the lease and woken (by the kill, or by its connection's next look,
 * within 0.25 s: the tests that prove the kill count its effects). No wake-up connection outlives the
 * service. ({@code LeaseMariaDbLockFactsTest} re-verifies what the design relies on in {@code KILL QUERY}.)
 */
class LeaseMariaDbWakeUpTest {

    private static final Duration LONG = Duration.ofSeconds(30);
    /** How often the waiters of the tests that prove a wake-up poll, and how long they wait: far past any bound here. */
    private static final Duration POLL = Duration.ofMinutes(10);

    private static final String WAKE_UPS = "dev.holdfast.lease.internal.MariaDbWakeUps";
    /**
     * Held here: java.util.logging keeps loggers weakly, so a logger given a handler and then collected (before the
     * wake-ups' class first logs) comes back without it, and its warnings go unseen (seen on a busy machine).
     */
    private static final Logger WAKE_UPS_LOG = Logger.getLogger(WAKE_UPS);
    /** MariaDB's "Query execution was interrupted". */
    private static final int INTERRUPTED = 1317;

    private static LeaseService polledRarely(TestDatabase db, DataSource pool, String table) {
        return LeaseFixture.builder(db, pool)
                .table(table)
                .tune(t -> t.queuedPoll(POLL, POLL).safetyPoll(POLL).pollingQueueEntry(POLL.multipliedBy(3)))
                .build();
    }

    /** Each round, the waiter's wake-up connection sleeps in its watch, and the release's kill ends it. */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aReleaseWakesAWaiterOfAnotherServiceAtOnce(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        List<String> wakes = new CopyOnWriteArrayList<>();
        try (LeaseService a = LeaseFixture.service(db, db.newPool(3), table);
                LeaseService b = polledRarely(db, recordingWatchWakes(db.newPool(3), wakes), table)) {
            for (int round = 0; round < 3; round++) {
                Lease held = a.acquire("job", "a", LONG, LONG);
                CompletableFuture<Lease> waiter = LeaseFixture.lockAsync(b, "job", "b", LONG, POLL);
                LeaseFixture.awaitPublished(db, table, 1);
                awaitWatching(b);
                awaitWatcherAsleep(db, table);
                a.release(held);
                Lease got =
                        waiter.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS); // a poll would take ten minutes
                assertThat(got.token()).isEqualTo(held.token() + 1);
                b.release(got);
                LeaseFixture.awaitQueued(db, table, 0);
            }
        }
        // Each kill ends the wait it meets. (One that came between two watches would be lost, and its hand-off found by
        // the next watch's look: possible, if unlikely; never in all three rounds.)
        assertThat(wakes).as("the watches the kills ended").isNotEmpty().isSubsetOf("woken", "error " + INTERRUPTED);
        awaitNoWatcher(db, table); // no wake-up connection outlives the services
    }

    /**
     * The call that waits first runs the watch on its own thread (no hop from another thread to hand it its grant);
     * a second waiting call of the same service follows, parked, and takes the watch over when the first has its
     * grant. The service's own thread never watches. Both are woken by kills: they poll every ten minutes.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void theFirstWaitingCallWatchesOnItsOwnThreadAndTheNextTakesOver(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService a = LeaseFixture.service(db, db.newPool(3), table);
                LeaseService b = polledRarely(db, db.newPool(4), table)) {
            Lease held = a.acquire("job", "a", LONG, LONG);
            CompletableFuture<Lease> first = LeaseFixture.lockAsync(b, "job", "b1", LONG, POLL);
            LeaseFixture.awaitPublished(db, table, 1);
            awaitWatchingOn("test-lock-b1");
            CompletableFuture<Lease> second = LeaseFixture.lockAsync(b, "job", "b2", LONG, POLL);
            LeaseFixture.awaitPublished(db, table, 2);
            LeaseFixture.awaitAsleepUntilWoken("b2");
            assertThat(LeaseFixture.watches("test-lock-b1"))
                    .as("the first call still watches")
                    .isTrue();
            assertThat(LeaseFixture.watches("test-lock-b2"))
                    .as("the second follows")
                    .isFalse();
            assertThat(LeaseFixture.watches("holdfast-lease-wake-ups-" + table))
                    .as("the service's thread")
                    .isFalse();

            a.release(held);
            Lease got = first.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS); // a poll would take ten minutes
            assertThat(got.token()).isEqualTo(held.token() + 1);
            awaitWatchingOn("test-lock-b2");
            assertThat(LeaseFixture.watches("holdfast-lease-wake-ups-" + table))
                    .as("the service's thread")
                    .isFalse();
            b.release(got);
            Lease next = second.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS);
            assertThat(next.token()).isEqualTo(got.token() + 1);
            b.release(next);
        }
        awaitNoWatcher(db, table);
    }

    /** Waits until the thread named {@code thread} runs a wake-up connection's watch. */
    private static void awaitWatchingOn(String thread) {
        await(thread + " watching")
                .atMost(LeaseFixture.AT_MOST)
                .pollInterval(Duration.ofMillis(5))
                .until(() -> LeaseFixture.watches(thread));
    }

    /**
     * A kill that meets the wake-up connection in another statement (here: leaving a granted waiter's entry,
     * made slow) fails only that statement: no outage is reported, the entry is left all the same, and the
     * connection watches again.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aKillThatMeetsAnotherStatementIsNoOutage(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        List<LogRecord> records = capture();
        AtomicBoolean slow = new AtomicBoolean(true);
        List<Integer> slowEnded = new CopyOnWriteArrayList<>();
        DataSource pool = beforePreparingOn(db.newPool(3), "DELETE FROM " + table + "_queue", c -> {
            if (slow.getAndSet(false)) { // the first leave only: a statement that takes until it is killed
                try (java.sql.Statement st = c.createStatement()) {
                    st.executeQuery("SELECT COUNT(*) FROM (SELECT SLEEP(60) AS s) slow")
                            .close();
                    slowEnded.add(0);
                } catch (SQLException e) {
                    slowEnded.add(e.getErrorCode());
                    throw e;
                }
            }
        });
        try (LeaseService a = LeaseFixture.service(db, db.newPool(3), table);
                LeaseService b = polledRarely(db, pool, table)) {
            Lease held = a.acquire("job", "a", LONG, LONG);
            CompletableFuture<Lease> waiter = LeaseFixture.lockAsync(b, "job", "b", LONG, POLL);
            LeaseFixture.awaitPublished(db, table, 1);
            awaitWatching(b);
            a.release(held);
            Lease got = waiter.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS);
            long slowStatement = awaitSession(db, "%SLEEP(60)%");
            db.execute("KILL QUERY " + slowStatement);
            LeaseFixture.awaitQueued(db, table, 0); // left on the second try
            assertThat(slowEnded).containsExactly(INTERRUPTED);
            CompletableFuture<Lease> again = LeaseFixture.lockAsync(a, "job", "a", LONG, LONG);
            LeaseFixture.awaitQueued(db, table, 1);
            b.release(got);
            a.release(again.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS));
            assertThat(warnings(records)).as("no outage").isZero();
        } finally {
            WAKE_UPS_LOG.removeHandler(handler);
        }
    }

    /**
     * A leave of a granted waiter's entry that InnoDB rolls back as a deadlock victim is no outage: a release's
     * hand-off reads the queue through its index and then the entry (a share lock on each), the leave locks the
     * entry and then its index record, so the two can meet in a cycle. Here another transaction takes that part:
     * it share-locks the index record before the leave, and the entry once the leave waits for the index. The
     * leave loses (the other transaction has more to roll back); the entry is left on the next try, the
     * connection watches on, and the next release wakes the next waiter.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aDeadlockedLeaveIsNoOutage(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        AtomicBoolean first = new AtomicBoolean(true);
        CompletableFuture<Void> cycle = new CompletableFuture<>();
        CompletableFuture<Void> released = new CompletableFuture<>();
        List<LogRecord> records = capture();
        try (HikariDataSource other = db.newPool(1);
                Connection t = other.getConnection()) {
            db.execute("CREATE TABLE " + table + "_weight (id INT PRIMARY KEY) ENGINE=InnoDB");
            long deadlocksBefore = deadlocks(db);
            t.setAutoCommit(false);
            DataSource pool = beforePreparingOn(db.newPool(3), "DELETE FROM " + table + "_queue", c -> {
                if (!first.getAndSet(false)) {
                    return;
                }
                // Not before the release returned: its kill, if b's connection found the grant by its look first, would
                // end the leave's lock wait instead of the deadlock.
                released.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS);
                String entry;
                try (java.sql.Statement st = t.createStatement()) {
                    // More to roll back than the leave has: InnoDB picks the leave as the victim.
                    for (int i = 0; i < 10; i++) {
                        st.executeUpdate("INSERT INTO " + table + "_weight VALUES (" + i + ")");
                    }
                    // The index records alone (the index covers the read): the hand-off's first lock.
                    try (java.sql.ResultSet rs = st.executeQuery("SELECT owner FROM " + table + "_queue FORCE INDEX ("
                            + table + "_queue_place) WHERE name = 'job' LOCK IN SHARE MODE")) {
                        assertThat(rs.next()).as("b's entry").isTrue();
                        entry = rs.getString(1);
                    }
                }
                new Thread(
                                () -> { // its own thread: it blocks, and the common pool may have one
                                    try {
                                        LockWaits.awaitWaitingForALock(
                                                db,
                                                "DELETE FROM " + table + "_queue%",
                                                1); // the leave, for the index record
                                        // The entry itself, which the waiting leave holds: the hand-off's second lock
                                        // closes the cycle.
                                        try (java.sql.PreparedStatement ps =
                                                t.prepareStatement("SELECT lease_owner FROM " + table + "_queue"
                                                        + " WHERE name = 'job' AND owner = ? LOCK IN SHARE MODE")) {
                                            ps.setString(1, entry);
                                            ps.executeQuery().close();
                                        }
                                        t.commit();
                                        cycle.complete(null);
                                    } catch (Throwable e) {
                                        cycle.completeExceptionally(e);
                                    }
                                },
                                "test-deadlock-cycle")
                        .start();
            });
            try (LeaseService a = LeaseFixture.service(db, db.newPool(3), table);
                    LeaseService b = polledRarely(db, pool, table)) {
                Lease held = a.acquire("job", "a", LONG, LONG);
                CompletableFuture<Lease> waiter = LeaseFixture.lockAsync(b, "job", "b", LONG, POLL);
                LeaseFixture.awaitPublished(db, table, 1);
                awaitWatching(b);
                a.release(held);
                released.complete(null);
                Lease got = waiter.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS);
                cycle.get(
                        LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS); // the other transaction won, and committed
                assertThat(deadlocks(db)).as("a deadlock, the leave its victim").isGreaterThan(deadlocksBefore);
                LeaseFixture.awaitQueued(db, table, 0); // left on the next try
                // b's connection still wakes it: its next grant comes at once, not at a poll ten minutes away.
                b.release(got);
                Lease next = a.acquire("job", "a", LONG, LONG);
                CompletableFuture<Lease> again = LeaseFixture.lockAsync(b, "job", "b", LONG, POLL);
                LeaseFixture.awaitPublished(db, table, 1);
                awaitWatching(b);
                a.release(next);
                b.release(again.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS));
            }
            assertThat(warnings(records)).as("no outage").isZero();
        } finally {
            WAKE_UPS_LOG.removeHandler(handler);
            db.execute("DROP TABLE IF EXISTS " + table + "_weight");
        }
    }

    /**
     * The other side of that cycle: the release's hand-off is InnoDB's victim (here the transaction that plays the
     * leave has more to roll back). The release is not refused for it: the statement changed nothing, and the
     * release tries again.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aReleaseWhoseHandOffIsADeadlockVictimHandsTheLeaseOn(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        AtomicBoolean first = new AtomicBoolean(true);
        CompletableFuture<Void> cycle = new CompletableFuture<>();
        try (HikariDataSource other = db.newPool(1);
                Connection t = other.getConnection()) {
            db.execute("CREATE TABLE " + table + "_weight (id INT PRIMARY KEY) ENGINE=InnoDB");
            long deadlocksBefore = deadlocks(db);
            t.setAutoCommit(false);
            DataSource pool = beforePreparingOn(db.newPool(3), "LOCK IN SHARE MODE)", c -> {
                if (!first.getAndSet(false)) {
                    return;
                }
                String entry;
                try (java.sql.Statement st = t.createStatement()) {
                    for (int i = 0; i < 10; i++) {
                        st.executeUpdate("INSERT INTO " + table + "_weight VALUES (" + i + ")");
                    }
                    try (java.sql.ResultSet rs =
                            st.executeQuery("SELECT owner FROM " + table + "_queue WHERE name = 'job'")) {
                        assertThat(rs.next()).as("b's entry").isTrue();
                        entry = rs.getString(1);
                    }
                    // The entry, as a leave locks it first.
                    st.executeQuery("SELECT lease_owner FROM " + table + "_queue WHERE name = 'job' AND owner = '"
                                    + entry + "' FOR UPDATE")
                            .close();
                }
                new Thread(
                                () -> { // its own thread: it blocks, and the common pool may have one
                                    try {
                                        LockWaits.awaitWaitingForALock(
                                                db, "UPDATE " + table + " SET%", 1); // the hand-off, for the entry
                                        // Then its index record, which the hand-off share-locked: the cycle.
                                        try (java.sql.Statement st = t.createStatement()) {
                                            st.executeQuery("SELECT owner FROM " + table + "_queue FORCE INDEX ("
                                                            + table + "_queue_place) WHERE name = 'job' FOR UPDATE")
                                                    .close();
                                        }
                                        t.commit();
                                        cycle.complete(null);
                                    } catch (Throwable e) {
                                        cycle.completeExceptionally(e);
                                    }
                                },
                                "test-deadlock-cycle")
                        .start();
            });
            try (LeaseService a = LeaseFixture.service(db, pool, table);
                    LeaseService b = polledRarely(db, db.newPool(3), table)) {
                Lease held = a.acquire("job", "a", LONG, LONG);
                CompletableFuture<Lease> waiter = LeaseFixture.lockAsync(b, "job", "b", LONG, POLL);
                LeaseFixture.awaitPublished(db, table, 1);
                awaitWatching(b);
                a.release(held);
                cycle.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS);
                assertThat(deadlocks(db))
                        .as("a deadlock, the hand-off its victim")
                        .isGreaterThan(deadlocksBefore);
                Lease got = waiter.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS);
                assertThat(got.token()).isEqualTo(held.token() + 1);
                b.release(got);
            }
        } finally {
            db.execute("DROP TABLE IF EXISTS " + table + "_weight");
        }
    }

    private static long deadlocks(TestDatabase db) throws SQLException {
        return db.queryLong(
                "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'INNODB_DEADLOCKS'");
    }

    /**
     * Releases by a database user that may not end another user's statements: the first kill is refused and
     * said once, later releases do not try again, and the waiter still gets every lease, at its wake-up
     * connection's next look (a sleep ends by itself within a quarter of a second), not at its poll.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aReleaseThatMayNotWakeLeavesTheGrantToTheNextLook(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        List<LogRecord> records = capture();
        String user = "hf_nokill_"
                + Long.toString(java.util.concurrent.ThreadLocalRandom.current().nextLong() >>> 24, 36);
        String grantee = "'" + user + "'@'%'";
        db.execute("CREATE USER " + grantee);
        AtomicInteger kills = new AtomicInteger();
        try {
            db.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON " + table + " TO " + grantee);
            db.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON " + table + "_queue TO " + grantee);
            try (HikariDataSource other = db.newPoolAs(user, 3);
                    LeaseService a = LeaseFixture.service(
                            db, beforePreparing(other, "KILL QUERY", kills::incrementAndGet), table);
                    LeaseService b = polledRarely(db, db.newPool(3), table)) {
                for (int round = 0; round < 3; round++) {
                    Lease held = a.acquire("job", "a", LONG, LONG);
                    CompletableFuture<Lease> waiter = LeaseFixture.lockAsync(b, "job", "b", LONG, POLL);
                    LeaseFixture.awaitPublished(db, table, 1);
                    awaitWatching(b);
                    a.release(held);
                    Lease got = waiter.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS);
                    assertThat(got.token()).isEqualTo(held.token() + 1);
                    b.release(got);
                    LeaseFixture.awaitQueued(db, table, 0);
                }
                assertThat(kills.get()).as("tried once, refused").isOne();
                assertThat(warnings(records)).as("said once").isOne();
                assertThat(records).anyMatch(r -> r.getMessage().contains("CONNECTION ADMIN"));
            }
        } finally {
            WAKE_UPS_LOG.removeHandler(handler);
            db.execute("DROP USER " + grantee);
        }
    }

    /** The wake-up connection is killed while it sleeps: logged once, replaced, and the next release wakes again. */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aKilledWakeUpConnectionIsLoggedOnceAndReplaced(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        List<LogRecord> records = capture();
        try (LeaseService a = LeaseFixture.service(db, db.newPool(3), table);
                LeaseService b = polledRarely(db, db.newPool(3), table)) {
            Lease held = a.acquire("job", "a", LONG, LONG);
            CompletableFuture<Lease> waiter = LeaseFixture.lockAsync(b, "job", "b", LONG, POLL);
            LeaseFixture.awaitPublished(db, table, 1);
            for (int kill = 0; kill < 2; kill++) {
                long watcher = awaitWatcherAsleep(db, table);
                db.execute("KILL " + watcher);
                int n = kill;
                await("the watching connection replaced")
                        .atMost(LeaseFixture.AT_MOST)
                        .pollInterval(Duration.ofMillis(10))
                        .until(() -> warnings(records) == 1
                                && b.probe().wakeUpWatching()
                                && watcherAsleep(db, table) > watcher);
                assertThat(warnings(records))
                        .as("kill %d: one warning per outage", n)
                        .isEqualTo(1);
                assertThat(records).as("resumed").anyMatch(r -> r.getMessage().contains("resumed"));
                records.clear(); // the next kill is an outage of its own
            }
            a.release(held);
            Lease got = waiter.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS);
            assertThat(got.token()).isEqualTo(held.token() + 1);
            b.release(got);
        } finally {
            WAKE_UPS_LOG.removeHandler(handler);
        }
    }

    /**
     * The connection holding the doorbell is killed: the wait takes the free bell at once, and both connections
     * are replaced (logged once), so the next release wakes the waiter at once again, through a new doorbell.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aKilledDoorbellHolderIsReplacedWithItsWakeUpConnection(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        List<LogRecord> records = capture();
        try (LeaseService a = LeaseFixture.service(db, db.newPool(3), table);
                LeaseService b = polledRarely(db, db.newPool(4), table)) {
            Lease held = a.acquire("job", "a", LONG, LONG);
            CompletableFuture<Lease> waiter = LeaseFixture.lockAsync(b, "job", "b", LONG, POLL);
            LeaseFixture.awaitPublished(db, table, 1);
            long watcher = awaitWatcherAsleep(db, table);
            long holder = db.queryLong("SELECT IS_USED_LOCK(CONCAT('holdfast_bell_', ?))", watcher);
            assertThat(holder)
                    .as("another session holds the bell")
                    .isNotEqualTo(watcher)
                    .isPositive();
            db.execute("KILL " + holder);
            await("both connections replaced")
                    .atMost(LeaseFixture.AT_MOST)
                    .pollInterval(Duration.ofMillis(10))
                    .until(() ->
                            warnings(records) == 1 && b.probe().wakeUpWatching() && watcherAsleep(db, table) > watcher);
            long newWatcher = watcherAsleep(db, table);
            assertThat(db.queryLong("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?", watcher))
                    .as("the old wake-up connection closed")
                    .isZero();
            assertThat(db.queryLong("SELECT IS_USED_LOCK(CONCAT('holdfast_bell_', ?))", newWatcher))
                    .as("a new holder rings the new bell")
                    .isNotEqualTo(newWatcher)
                    .isNotEqualTo(holder)
                    .isPositive();
            a.release(held);
            Lease got = waiter.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS); // a poll would take ten minutes
            assertThat(got.token()).isEqualTo(held.token() + 1);
            assertThat(warnings(records)).as("one warning for the outage").isEqualTo(1);
            b.release(got);
        } finally {
            WAKE_UPS_LOG.removeHandler(handler);
        }
        awaitNoWatcher(db, table);
    }

    /**
     * Every statement of the wake-up connection fails: one warning however often it retries, the
     * waiters poll (and get the lease), and once the statements work again the connection watches again.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aFailingWakeUpConnectionLeavesWaitersPollingAndRecovers(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        List<LogRecord> records = capture();
        AtomicBoolean failing = new AtomicBoolean(true);
        AtomicInteger failures = new AtomicInteger();
        DataSource pool = failing(db.newPool(3), "_LOCK", failing, failures); // the lock that says it is alive
        try (LeaseService a = LeaseFixture.service(db, db.newPool(3), table);
                LeaseService b = LeaseFixture.service(db, pool, table)) {
            Lease held = a.acquire("job", "a", LONG, LONG);
            CompletableFuture<Lease> waiter = LeaseFixture.lockAsync(b, "job", "b", LONG, LONG);
            await("three failed wake-up statements")
                    .atMost(LeaseFixture.AT_MOST)
                    .until(() -> failures.get() >= 3);
            a.release(held);
            Lease got = waiter.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS); // by polling
            assertThat(got.token()).isEqualTo(held.token() + 1);
            assertThat(warnings(records)).as("one warning for the outage").isEqualTo(1);
            failing.set(false);
            b.release(got);
            Lease again = a.acquire("job", "a", LONG, LONG);
            CompletableFuture<Lease> next = LeaseFixture.lockAsync(b, "job", "b", LONG, LONG);
            awaitWatching(b);
            a.release(again);
            b.release(next.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS));
            await("b's wake-up connection recovered")
                    .atMost(LeaseFixture.AT_MOST)
                    .until(() -> records.stream().anyMatch(r -> r.getMessage().contains("resumed")));
        } finally {
            WAKE_UPS_LOG.removeHandler(handler);
        }
    }

    /**
     * A granted waiter leaves the queue on its wake-up connection after its grant returned: a waiter that
     * releases at once, while leaving the queue takes 200 ms, has its entry still there, and the release
     * hands the lease past it to the next waiter, who is woken (otherwise it would wait for its poll, ten
     * minutes away).
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aWaiterThatReleasesAtOnceHandsTheLeasePastItsOwnEntry(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        String leave = "DELETE FROM " + table + "_queue";
        try (LeaseService a = LeaseFixture.service(db, db.newPool(3), table);
                LeaseService b = polledRarely(db, delaying(db.newPool(3), leave, Duration.ofMillis(200)), table);
                LeaseService c = polledRarely(db, db.newPool(3), table)) {
            List<String> violations = new CopyOnWriteArrayList<>();
            for (int round = 0; round < 3; round++) {
                Lease held = a.acquire("job", "a", LONG, LONG);
                CompletableFuture<Lease> first = new CompletableFuture<>();
                Thread releasingAtOnce = new Thread(
                        () -> {
                            try {
                                Lease got = b.acquire("job", "b", LONG, POLL);
                                long entries = db.queryLong("SELECT COUNT(*) FROM " + table + "_queue");
                                b.release(got); // at once, while its entry is still being left
                                if (entries != 2) {
                                    violations.add(
                                            "the grant waited for its entry to be left: " + entries + " entries");
                                }
                                first.complete(got);
                            } catch (Throwable e) {
                                first.completeExceptionally(e);
                            }
                        },
                        "test-lock-b");
                releasingAtOnce.start();
                LeaseFixture.awaitPublished(db, table, 1);
                awaitWatching(b);
                CompletableFuture<Lease> second = LeaseFixture.lockAsync(c, "job", "c", LONG, POLL);
                LeaseFixture.awaitPublished(db, table, 2);
                awaitWatching(c);
                a.release(held);
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
     * The wake-up connection cannot leave a granted waiter's entry (its statements fail): the grant
     * is the caller's all the same, and the entry is left on a pooled connection once statements work
     * again, long before it would have lapsed (in thirty minutes).
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void anEntryTheWakeUpConnectionCannotLeaveIsLeftOnAPooledConnection(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        AtomicBoolean failing = new AtomicBoolean(true);
        AtomicInteger failures = new AtomicInteger();
        try (LeaseService a = LeaseFixture.service(db, db.newPool(3), table);
                LeaseService b = polledRarely(
                        db, failing(db.newPool(3), "DELETE FROM " + table + "_queue", failing, failures), table)) {
            Lease held = a.acquire("job", "a", LONG, LONG);
            CompletableFuture<Lease> waiter = LeaseFixture.lockAsync(b, "job", "b", LONG, POLL);
            LeaseFixture.awaitPublished(db, table, 1);
            awaitWatching(b);
            a.release(held);
            Lease got = waiter.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS);
            assertThat(got.token()).as("granted while its entry cannot be left").isEqualTo(held.token() + 1);
            await("attempts to leave the entry").atMost(LeaseFixture.AT_MOST).until(() -> failures.get() >= 3);
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + "_queue"))
                    .as("b's entry, not left")
                    .isOne();
            failing.set(false);
            LeaseFixture.awaitQueued(db, table, 0);
            b.release(got);
        }
    }

    /**
     * Pools of one and two connections: the wake-up connection never takes the one a statement needs
     * (a pool of one has none to spare, and its waiters poll), and none outlives the services.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void tinyPoolsStillHandTheLeaseOnAndLeaveNoConnection(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService a = LeaseFixture.service(db, db.newPool(1), table);
                LeaseService b = LeaseFixture.service(db, db.newPool(1), table);
                LeaseService c = LeaseFixture.service(db, db.newPool(3), table)) {
            handOffs(List.of(a, b, c), 30);
        }
        awaitNoWatcher(db, table);
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
                services.add(LeaseFixture.service(db, db.newPool(3), table));
            }
            handOffs(services, 40);
        } finally {
            services.forEach(LeaseService::close);
        }
        awaitNoWatcher(db, table); // no wake-up connection outlives the services
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
            workers.add(CompletableFuture.runAsync(
                    () -> {
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
                    },
                    java.util.concurrent.Executors.newSingleThreadExecutor()));
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
            public void flush() {}

            @Override
            public void close() {}
        };
        WAKE_UPS_LOG.addHandler(handler);
        return records;
    }

    private static long warnings(List<LogRecord> records) {
        return records.stream().filter(r -> r.getLevel() == Level.WARNING).count();
    }

    /** Waits until {@code service}'s wake-up connection watches for hand-offs. */
    private static void awaitWatching(LeaseService service) {
        await("the wake-up connection watches")
                .atMost(LeaseFixture.AT_MOST)
                .pollInterval(Duration.ofMillis(5))
                .until(() -> service.probe().wakeUpWatching());
    }

    /** Waits until no session runs a watch of {@code table}'s queue (an aborted connection's session ends soon after). */
    private static void awaitNoWatcher(TestDatabase db, String table) {
        await("no session watches " + table + "_queue")
                .atMost(LeaseFixture.AT_MOST)
                .pollInterval(Duration.ofMillis(10))
                .until(() -> db.queryLong(
                                "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE ?"
                                        + " AND INFO NOT LIKE '%PROCESSLIST%'",
                                "%" + table + "_queue q%CONNECTION_ID()%holdfast_bell_%")
                        == 0);
    }

    /** The id of the session that runs a watch of {@code table}'s queue and sleeps in it now, or -1. */
    private static long watcherAsleep(TestDatabase db, String table) throws SQLException {
        return db.queryLong(
                "SELECT COALESCE(MAX(ID), -1) FROM information_schema.PROCESSLIST WHERE INFO LIKE ?"
                        + " AND ID IN (SELECT listener FROM " + table + "_queue)",
                "%" + table + "_queue q%CONNECTION_ID()%holdfast_bell_%");
    }

    /** Waits until a wake-up connection that a queue entry names sleeps in its watch; its id. */
    private static long awaitWatcherAsleep(TestDatabase db, String table) {
        AtomicLong id = new AtomicLong(-1);
        await("a wake-up connection asleep in its watch")
                .atMost(LeaseFixture.AT_MOST)
                .pollInterval(Duration.ofMillis(5))
                .until(() -> {
                    id.set(watcherAsleep(db, table));
                    return id.get() >= 0;
                });
        return id.get();
    }

    /** Waits until a session runs a statement like {@code pattern}; its id. */
    private static long awaitSession(TestDatabase db, String pattern) {
        AtomicLong id = new AtomicLong(-1);
        await("a session running " + pattern)
                .atMost(LeaseFixture.AT_MOST)
                .pollInterval(Duration.ofMillis(5))
                .until(() -> {
                    id.set(db.queryLong(
                            "SELECT COALESCE(MAX(ID), -1) FROM information_schema.PROCESSLIST"
                                    + " WHERE INFO LIKE ? AND INFO NOT LIKE '%PROCESSLIST%'",
                            pattern));
                    return id.get() >= 0;
                });
        return id.get();
    }

    /**
     * A pool whose watch statements' ends by a kill are recorded in {@code wakes}: "woken" for a wait that returned
     * NULL (a killed lock wait), "error N" for one that failed with code N.
     */
    private static DataSource recordingWatchWakes(DataSource pool, List<String> wakes) {
        return LeaseFixture.hooked(pool, (sql, statement) -> {
            if (!sql.contains("holdfast_bell_")) {
                return statement.call();
            }
            Object done;
            try {
                done = statement.call();
            } catch (SQLException e) {
                wakes.add("error " + e.getErrorCode());
                throw e;
            }
            if (!(done instanceof java.sql.ResultSet rs)) {
                return done;
            }
            return Proxy.newProxyInstance(
                    LeaseMariaDbWakeUpTest.class.getClassLoader(),
                    new Class<?>[] {java.sql.ResultSet.class},
                    (p, m, a) -> {
                        Object read = invoke(rs, m, a);
                        if (m.getName().equals("wasNull") && Boolean.TRUE.equals(read)) {
                            wakes.add("woken");
                        }
                        return read;
                    });
        });
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

    /** Something done on the connection before a statement is prepared. */
    private interface InjectedOn {
        void run(Connection c) throws Exception;
    }

    private static DataSource beforePreparing(DataSource pool, String text, Injected injected) {
        return beforePreparingOn(pool, text, c -> injected.run());
    }

    /** A pool whose connections run {@code injected} before preparing a statement that contains {@code text}. */
    private static DataSource beforePreparingOn(DataSource pool, String text, InjectedOn injected) {
        return (DataSource) Proxy.newProxyInstance(
                LeaseMariaDbWakeUpTest.class.getClassLoader(),
                new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                    Object result = invoke(pool, method, args);
                    if (!(result instanceof Connection c)) {
                        return result;
                    }
                    return Proxy.newProxyInstance(
                            LeaseMariaDbWakeUpTest.class.getClassLoader(),
                            new Class<?>[] {Connection.class},
                            (p, m, a) -> {
                                if (m.getName().equals("prepareStatement")
                                        && a[0] instanceof String sql
                                        && sql.contains(text)) {
                                    injected.run(c);
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
