package dev.holdfast.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.DatabaseException;
import dev.holdfast.lease.internal.BlockingAcquire;
import dev.holdfast.lease.internal.LeaseSql;
import dev.holdfast.lease.internal.LeaseStores;
import dev.holdfast.lease.internal.PgLeaseSql;
import dev.holdfast.lease.internal.PollingLeaseSql;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/** The bounded blocking acquire, {@link LeaseService#acquire}. The bounds here are the explicit lock-bound tests. */
class LeaseLockTest {

    private static final Duration LONG = Duration.ofSeconds(30);

    private static long queued(TestDatabase db, String table) throws Exception {
        return db.kind() == TestDatabase.Kind.POSTGRESQL ? db.queryLong("SELECT COUNT(*) FROM " + table + "_queue") : 0;
    }

    @DatabaseTest
    void aWaiterGetsTheLeaseWhenItIsReleased(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService a = LeaseFixture.service(db, db.newPool(2), table);
                LeaseService b = LeaseFixture.service(db, db.newPool(2), table)) {
            Lease held = a.tryAcquire("job", "a", LONG).orElseThrow();
            CompletableFuture<Lease> waiting = LeaseFixture.lockAsync(b, "job", "b", LONG, Duration.ofSeconds(10));
            LeaseFixture.awaitQueued(db, table, 1);
            assertThat(waiting).isNotDone();
            a.release(held);
            Lease got = waiting.get(10, TimeUnit.SECONDS);
            assertThat(got.owner()).isEqualTo("b");
            assertThat(got.token()).isEqualTo(held.token() + 1);
            assertThat(queued(db, table)).as("the waiter left the queue").isZero();
        }
    }

    @DatabaseTest
    void aWaiterTakesOverAnExpiredLease(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService a = LeaseFixture.service(db, db.newPool(2), table);
                LeaseService b = LeaseFixture.service(db, db.newPool(2), table)) {
            Lease held = a.tryAcquire("job", "a", Duration.ofMillis(300)).orElseThrow();
            Lease got = b.acquire("job", "b", LONG, Duration.ofSeconds(10));
            assertThat(got.token()).isEqualTo(held.token() + 1);
            assertThat(got.acquiredAt()).isAfterOrEqualTo(held.expiresAt());
        }
    }

    @DatabaseTest
    void theWaitIsBoundedAndLeavesNothingBehind(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService a = LeaseFixture.service(db, db.newPool(2), table);
                LeaseService b = LeaseFixture.service(db, db.newPool(2), table)) {
            assertThat(a.tryAcquire("job", "a", LONG)).isPresent();
            String before = LeaseFixture.dump(db, table);
            long start = System.nanoTime();
            Throwable timeout = catchThrowable(() -> b.acquire("job", "b", LONG, Duration.ofMillis(400)));
            long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(timeout).isInstanceOf(LeaseTimeoutException.class).hasMessageContaining("within 400 ms");
            assertThat(((LeaseTimeoutException) timeout).maxWait()).isEqualTo(Duration.ofMillis(400));
            assertThat(waitedMillis).isBetween(400L, 3000L);
            assertThat(LeaseFixture.dump(db, table)).isEqualTo(before);
            assertThat(queued(db, table)).isZero();
            // A zero wait tries once.
            assertThat(catchThrowable(() -> b.acquire("job", "b", LONG, Duration.ZERO)))
                    .isInstanceOf(LeaseTimeoutException.class);
        }
    }

    @DatabaseTest
    void theWaitIsInterruptible(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService a = LeaseFixture.service(db, db.newPool(2), table);
                LeaseService b = LeaseFixture.service(db, db.newPool(2), table)) {
            assertThat(a.tryAcquire("job", "a", LONG)).isPresent();
            AtomicReference<Throwable> outcome = new AtomicReference<>();
            CountDownLatch done = new CountDownLatch(1);
            Thread waiter = new Thread(() -> {
                try {
                    b.acquire("job", "b", LONG, Duration.ofSeconds(30));
                } catch (Throwable e) {
                    outcome.set(e);
                } finally {
                    done.countDown();
                }
            });
            waiter.start();
            LeaseFixture.awaitQueued(db, table, 1); // interrupted while it waits, not before
            long start = System.nanoTime();
            waiter.interrupt();
            assertThat(done.await(5, TimeUnit.SECONDS)).isTrue();
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(2000);
            assertThat(outcome.get()).isInstanceOf(InterruptedException.class);
            assertThat(queued(db, table)).isZero();
            assertThat(a.find("job").orElseThrow().owner()).isEqualTo("a");
        }
    }

    /**
     * PostgreSQL wakes the waiter through NOTIFY: with the safety poll set to a minute, the waiter
     * can only get the lease within the bound if the release woke it.
     */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void onPostgresqlTheReleaseWakesTheWaiterWithoutPolling(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService a = LeaseFixture.service(db, db.newPool(2), table);
                LeaseService b = LeaseFixture.builder(db, db.newPool(2))
                        .table(table)
                        .tune(t -> t.safetyPoll(Duration.ofMinutes(1)))
                        .build()) {
            for (int round = 0; round < 3; round++) {
                Lease held = a.acquire("job", "a", LONG, Duration.ofSeconds(5));
                CompletableFuture<Lease> waiting = LeaseFixture.lockAsync(b, "job", "b", LONG, Duration.ofSeconds(20));
                LeaseFixture.awaitListenedEntry(db, table);
                assertThat(queued(db, table)).as("the waiter queued itself").isEqualTo(1);
                long released = System.nanoTime();
                a.release(held);
                Lease got = waiting.get(5, TimeUnit.SECONDS);
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - released))
                        .isLessThan(5000);
                assertThat(got.token()).isEqualTo(held.token() + 1);
                b.release(got);
            }
        }
    }

    /**
     * The lease goes to the queued waiters in arrival order, not back to the releasing worker that
     * asks again at once (the peers hand it back most of the time): on PostgreSQL by notification,
     * on H2 and MariaDB by polling.
     */
    @DatabaseTest
    void theReleasingWorkerCannotBargeAheadOfTheQueue(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService a = LeaseFixture.service(db, db.newPool(2), table);
                LeaseService b = LeaseFixture.service(db, db.newPool(2), table);
                LeaseService c = LeaseFixture.service(db, db.newPool(2), table)) {
            Lease first = a.acquire("job", "a", LONG, Duration.ofSeconds(5));
            CompletableFuture<Lease> bWaits = LeaseFixture.lockAsync(b, "job", "b", LONG, Duration.ofSeconds(20));
            releaseLater(b, bWaits);
            LeaseFixture.awaitQueued(db, table, 1);
            CompletableFuture<Lease> cWaits = LeaseFixture.lockAsync(c, "job", "c", LONG, Duration.ofSeconds(20));
            releaseLater(c, cWaits);
            LeaseFixture.awaitQueued(db, table, 2);
            a.release(first);
            Lease again = a.acquire("job", "a", LONG, Duration.ofSeconds(20));
            // a asked right after its release, yet b and c, queued earlier, got it first, in order.
            Lease bGot = bWaits.get();
            Lease cGot = cWaits.get();
            assertThat(bGot.token()).isEqualTo(first.token() + 1);
            assertThat(cGot.token()).isEqualTo(first.token() + 2);
            assertThat(again.token()).isEqualTo(first.token() + 3);
        } catch (ExecutionException e) {
            throw new AssertionError(e.getCause());
        }
    }

    /**
     * A {@code lock} call whose queueing statement committed and then lost its connection, and whose
     * first attempt to leave the queue fails too (the database not back yet, as in a restart), leaves
     * the queue once the database answers again: a release then hands the lease to the next waiter,
     * not to the entry of a call that is gone, whose grant would wait out its TTL with nobody to take
     * it (a restart fault test saw a waiter miss its 40 s bound so on PostgreSQL, where such an entry
     * lived four safety polls).
     */
    @DatabaseTest
    void aCallThatFailedLeavesTheQueueOnceTheDatabaseAnswersAgain(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        LeaseSql sql = LeaseStores.forDialect(
                        LeaseFixture.service(db, db.dataSource(), table).dialect(), table)
                .sql();
        String queueing =
                sql instanceof PgLeaseSql pg ? pg.acquireOrQueueSql() : ((PollingLeaseSql) sql).joinQueueSql();
        String givingUpSql = sql instanceof PgLeaseSql pg ? pg.giveUpSql() : sql.leaveQueueSql();
        AtomicBoolean loseConnectionAfterQueueing = new AtomicBoolean();
        AtomicBoolean refuseGivingUp = new AtomicBoolean();
        AtomicInteger givingUp = new AtomicInteger();
        try (HikariDataSource pool = db.newPool(3);
                LeaseService holder = LeaseFixture.service(db, db.newPool(2), table);
                LeaseService a = LeaseFixture.builder(db, LeaseFixture.hooked(pool, (statement, run) -> {
                            if (statement.equals(queueing) && loseConnectionAfterQueueing.compareAndSet(true, false)) {
                                run.call();
                                throw new SQLException("connection lost after the commit", "08006");
                            }
                            if (statement.equals(givingUpSql)) {
                                givingUp.incrementAndGet();
                                if (refuseGivingUp.compareAndSet(true, false)) {
                                    throw new SQLException("the database system is starting up", "57P03");
                                }
                            }
                            return run.call();
                        }))
                        .table(table)
                        .tune(t -> t.safetyPoll(Duration.ofMinutes(1)))
                        .build();
                LeaseService b = LeaseFixture.builder(db, db.newPool(2))
                        .table(table)
                        .tune(t -> t.safetyPoll(Duration.ofMinutes(1)))
                        .build()) {
            Lease held = holder.tryAcquire("job", "holder", LONG).orElseThrow();
            loseConnectionAfterQueueing.set(true);
            refuseGivingUp.set(true);
            assertThat(catchThrowable(() -> a.acquire("job", "a", LONG, Duration.ofSeconds(20))))
                    .isInstanceOf(DatabaseException.class);

            LeaseFixture.awaitQueued(db, table, 0);
            assertThat(givingUp.get()).as("left the queue at the second try").isEqualTo(2);
            CompletableFuture<Lease> waiting = LeaseFixture.lockAsync(b, "job", "b", LONG, Duration.ofSeconds(20));
            if (db.kind() == TestDatabase.Kind.POSTGRESQL) {
                LeaseFixture.awaitListenedEntry(db, table);
            } else {
                LeaseFixture.awaitQueued(db, table, 1);
            }
            holder.release(held);
            Lease got = waiting.get(10, TimeUnit.SECONDS);
            assertThat(got.owner()).isEqualTo("b");
            assertThat(got.token())
                    .as("the next grant, to the waiter that is there")
                    .isEqualTo(held.token() + 1);
            b.release(got);
        }
    }

    /**
     * A polling waiter (H2, MariaDB) refreshes its queue entry every few milliseconds, so the entry lives
     * only seconds, whatever the safety poll: an entry a failed call leaves behind blocks the waiters
     * behind it that long at most (it blocked them for four safety polls before: a restart test starved).
     */
    @DatabaseTest(only = {TestDatabase.Kind.H2, TestDatabase.Kind.MARIADB})
    void aPollingWaitersQueueEntryLivesSecondsWhateverTheSafetyPoll(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService a = LeaseFixture.service(db, db.newPool(2), table);
                LeaseService b = LeaseFixture.builder(db, db.newPool(2))
                        .table(table)
                        .tune(t -> t.safetyPoll(Duration.ofMinutes(1)))
                        .build()) {
            Lease held = a.tryAcquire("job", "a", LONG).orElseThrow();
            CompletableFuture<Lease> waiting = LeaseFixture.lockAsync(b, "job", "b", LONG, Duration.ofSeconds(20));
            LeaseFixture.awaitQueued(db, table, 1);
            String now = db.kind() == TestDatabase.Kind.H2 ? "HOLDFAST_CLOCK_TIMESTAMP()" : "UTC_TIMESTAMP(6)";
            String micros = db.kind() == TestDatabase.Kind.H2
                    ? "DATEDIFF(MICROSECOND, " + now + ", wait_until)"
                    : "TIMESTAMPDIFF(MICROSECOND, " + now + ", wait_until)";
            long left = db.queryLong("SELECT MAX(" + micros + ") FROM " + table + "_queue");
            // "now" is this statement's start; the polling waiter may refresh its entry a few microseconds
            // after it and before the read (seen: 41 µs), so allow its poll interval on top.
            assertThat(left).isPositive().isLessThanOrEqualTo(BlockingAcquire.QUEUE_ENTRY_MICROS + 100_000);
            a.release(held);
            b.release(waiting.get(20, TimeUnit.SECONDS));
            LeaseFixture.awaitQueued(db, table, 0); // the granted waiter left (MariaDB: after its grant returned)
        }
    }

    /**
     * A polling waiter (H2, MariaDB) refreshes its queue entry once a quarter of the entry's life has
     * passed, not at every look (each refresh is a commit: with MariaDB's 50 ms looks, 40 of them per
     * entry lifetime were most of a hand-off's flushes): its entry never lapses, it keeps its place
     * over many lifetimes, and a waiter that came later is still granted after it.
     */
    @DatabaseTest(only = {TestDatabase.Kind.H2, TestDatabase.Kind.MARIADB})
    void aPollingWaiterRefreshesItsEntryOncePerQuarterLifeAndKeepsItsPlace(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        Duration life = Duration.ofMillis(400);
        Duration poll = Duration.ofMillis(5); // 20 looks per quarter of the entry's life
        try (LeaseService a = LeaseFixture.service(db, db.newPool(2), table);
                LeaseService b = LeaseFixture.builder(db, db.newPool(3))
                        .table(table)
                        .tune(t -> t.queuedPoll(poll, poll).safetyPoll(poll).pollingQueueEntry(life))
                        .build();
                LeaseService c = LeaseFixture.service(db, db.newPool(2), table)) {
            Lease held = a.tryAcquire("job", "a", LONG).orElseThrow();
            CompletableFuture<Lease> first = LeaseFixture.lockAsync(b, "job", "b", LONG, Duration.ofSeconds(30));
            LeaseFixture.awaitQueued(db, table, 1);
            boolean h2 = db.kind() == TestDatabase.Kind.H2;
            if (!h2) { // MariaDB: once the wake-up connection is there, the entry is refreshed at once to publish it
                LeaseFixture.awaitPublished(db, table, 1);
            }
            String epoch = h2 ? "TIMESTAMP '2000-01-01 00:00:00'" : "'2000-01-01 00:00:00'";
            String micros =
                    h2 ? "DATEDIFF(MICROSECOND, " + epoch + ", %s)" : "TIMESTAMPDIFF(MICROSECOND, " + epoch + ", %s)";
            String now = h2 ? "HOLDFAST_CLOCK_TIMESTAMP()" : "UTC_TIMESTAMP(6)";
            String read = "SELECT " + micros.formatted("queued_at") + ", " + micros.formatted("wait_until") + ", "
                    + micros.formatted(now) + " FROM " + table + "_queue";
            long queuedAt = db.queryLong("SELECT " + micros.formatted("queued_at") + " FROM " + table + "_queue");
            java.util.TreeSet<Long> refreshes = new java.util.TreeSet<>();
            java.util.List<String> lapsed = new java.util.ArrayList<>();
            // Five refreshes: at least four quarters, one whole lifetime and more, of looks every 5 ms.
            org.awaitility.Awaitility.await("five refreshes of the waiter's entry")
                    .atMost(Duration.ofSeconds(20))
                    .pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(10))
                    .until(() -> {
                        try (Connection r = db.connection();
                                PreparedStatement ps = r.prepareStatement(read);
                                ResultSet rs = ps.executeQuery()) {
                            assertThat(rs.next())
                                    .as("the waiter's entry is there")
                                    .isTrue();
                            assertThat(rs.getLong(1))
                                    .as("its place in the queue")
                                    .isEqualTo(queuedAt);
                            if (rs.getLong(2) <= rs.getLong(3)) {
                                lapsed.add("lapsed at " + rs.getLong(3));
                            }
                            refreshes.add(rs.getLong(2));
                        }
                        return refreshes.size() >= 5;
                    });
            assertThat(lapsed).as("the entry never lapsed").isEmpty();
            Long previous = null;
            for (long until : refreshes) {
                if (previous != null) {
                    // A quarter of the life is 100 ms between the sends; allow for the database's own delays.
                    assertThat(until - previous)
                            .as("time between two refreshes, µs")
                            .isGreaterThanOrEqualTo(50_000);
                }
                previous = until;
            }
            CompletableFuture<Lease> later = LeaseFixture.lockAsync(c, "job", "c", LONG, Duration.ofSeconds(30));
            LeaseFixture.awaitQueued(db, table, 2);
            a.release(held);
            Lease got = first.get(20, TimeUnit.SECONDS);
            assertThat(got.owner()).as("the first waiter kept its place").isEqualTo("b");
            assertThat(later).isNotDone();
            b.release(got);
            c.release(later.get(20, TimeUnit.SECONDS));
        }
    }

    /**
     * A polling waiter (H2) is woken at once by a release through its own service, not at its next
     * poll (here a minute away); a release through another service does not wake it. (MariaDB: a
     * release hands the lease to the waiter, see {@code LeaseMariaDbHandOffTest}.)
     */
    @DatabaseTest(only = TestDatabase.Kind.H2)
    void aReleaseThroughTheSameServiceWakesItsPollingWaiterAtOnce(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService same = LeaseFixture.builder(db, db.newPool(3))
                        .table(table)
                        .tune(t -> t.queuedPoll(Duration.ofMinutes(1), Duration.ofMinutes(1)))
                        .build();
                LeaseService other = LeaseFixture.service(db, db.newPool(2), table)) {
            Lease held = same.tryAcquire("job", "a", LONG).orElseThrow();
            CompletableFuture<Lease> waiting = LeaseFixture.lockAsync(same, "job", "b", LONG, Duration.ofMinutes(2));
            LeaseFixture.awaitQueued(db, table, 1);
            other.release(held);
            // Nothing to wait for: the test needs time to pass, for a wake-up that must not come to show.
            Thread.sleep(500);
            assertThat(waiting)
                    .as("a release elsewhere leaves it to its next poll")
                    .isNotDone();
            Lease barged = same.tryAcquire("job", "c", LONG).orElseThrow(); // tryAcquire does not queue
            same.release(barged);
            Lease got = waiting.get(10, TimeUnit.SECONDS);
            assertThat(got.owner()).isEqualTo("b");
            assertThat(got.token()).isEqualTo(barged.token() + 1);
        }
    }

    private static void releaseLater(LeaseService leases, CompletableFuture<Lease> f) {
        f.thenAccept(l -> {
            try {
                Thread.sleep(100); // holds the lease a while, as a worker does
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            leases.release(l);
        });
    }

    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void theListenerConnectionGoesBackToThePoolClean(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        HikariDataSource pool = db.newPool(2);
        try (LeaseService a = LeaseFixture.service(db, db.newPool(2), table)) {
            Lease held = a.tryAcquire("job", "a", LONG).orElseThrow();
            try (LeaseService b = LeaseFixture.service(db, pool, table)) {
                CompletableFuture<Lease> waiting = LeaseFixture.lockAsync(b, "job", "b", LONG, Duration.ofSeconds(10));
                LeaseFixture.awaitListenedEntry(db, table); // the waiter took its listener connection
                a.release(held);
                b.release(waiting.get(10, TimeUnit.SECONDS));
            }
        }
        try (Connection c1 = pool.getConnection();
                Connection c2 = pool.getConnection()) {
            for (Connection c : new Connection[] {c1, c2}) {
                // This table's channels only: behind a transaction pooler the server connection may be one that
                // another test (in another JVM of the same pass) left listening, and a listener's probe LISTENs on
                // one it cannot UNLISTEN again (documented): channels holdfast_probe_<random>, of no table.
                try (PreparedStatement ps =
                                c.prepareStatement("SELECT COUNT(*), string_agg(c, ', ') FROM pg_listening_channels() c"
                                        + " WHERE starts_with(c, "
                                        + dev.holdfast.lease.internal.PgLeaseSql.stemSql(table) + " || '_')");
                        ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    assertThat(rs.getLong(1))
                            .as("channels listened on: %s", rs.getString(2))
                            .isZero();
                }
            }
        }
    }

    /**
     * A closed service starts no thread again: a waiting lock and a keep-alive are refused, also when
     * the service never started its threads before it was closed; the one-statement calls still work.
     */
    @DatabaseTest
    void aClosedServiceRefusesWaitingAndKeepAliveButStillAnswersOneStatementCalls(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        LeaseService service = LeaseFixture.service(db, db.newPool(2), table);
        service.close();
        assertThat(catchThrowable(() -> service.acquire("job", "a", LONG, Duration.ofSeconds(1))))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        assertThat(queued(db, table)).as("nobody queued").isZero();
        Lease lease = service.tryAcquire("job", "a", LONG).orElseThrow();
        assertThat(catchThrowable(() -> service.keepAlive(lease, LONG, null)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        assertThat(service.find("job"))
                .as("the refused keep-alive renewed nothing")
                .contains(lease);
        service.release(lease);
        assertThat(service.find("job").orElseThrow().isReleased()).isTrue();
    }
}
