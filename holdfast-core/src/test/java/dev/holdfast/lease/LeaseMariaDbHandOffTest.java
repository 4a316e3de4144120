package dev.holdfast.lease;

import dev.holdfast.LockViews;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.lease.internal.LeaseRow;
import dev.holdfast.lease.internal.LeaseStore;
import dev.holdfast.lease.internal.LeaseStores;
import dev.holdfast.lease.internal.PollingLeaseSql;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Direct hand-off on MariaDB: a release that frees a lease grants it, in its own statement, to the
 * first live waiter whose service's wake-up connection is alive, so the hand-off costs one commit and
 * the waiter only looks. Waiters here poll every ten minutes unless a wake-up tells them to look.
 */
class LeaseMariaDbHandOffTest {

    private static final Duration LONG = Duration.ofSeconds(30);
    private static final Duration POLL = Duration.ofMinutes(10);
    private static final long MINUTE_MICROS = 60_000_000;

    private static LeaseService polledRarely(TestDatabase db, DataSource pool, String table) {
        return LeaseFixture.builder(db, pool)
                .table(table)
                .tune(t -> t.queuedPoll(POLL, POLL).safetyPoll(POLL).pollingQueueEntry(POLL.multipliedBy(3)))
                .build();
    }

    /**
     * The release's own commit is the waiter's grant (owner, token + 1, handed_to its waiter id, live), and
     * the waiter's call returns exactly that grant, read by its service's woken connection; its entry goes
     * afterwards.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void theReleaseCommitsTheFirstWaitersGrantAndTheWaiterReturnsIt(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService a = LeaseFixture.service(db, db.newPool(3), table);
                LeaseService b = polledRarely(db, db.newPool(3), table)) {
            for (int round = 0; round < 3; round++) {
                Lease held = a.acquire("job", "a", LONG, LONG);
                CompletableFuture<Lease> waiting = LeaseFixture.lockAsync(b, "job", "b", LONG, POLL);
                LeaseFixture.awaitPublished(db, table, 1);
                LeaseFixture.awaitAsleepUntilWoken("b");
                await().atMost(LeaseFixture.AT_MOST).until(() -> b.probe().wakeUpWatching());
                String waiter = db.queryString("SELECT owner FROM " + table + "_queue");
                a.release(held);
                // Read before the waiter can look: the grant is already there, made by the release.
                assertThat(db.queryString("SELECT owner FROM " + table + " WHERE name = 'job'"))
                        .isEqualTo("b");
                assertThat(db.queryString("SELECT handed_to FROM " + table + " WHERE name = 'job'"))
                        .isEqualTo(waiter);
                assertThat(db.queryLong("SELECT token FROM " + table + " WHERE name = 'job'"))
                        .isEqualTo(held.token() + 1);
                Lease got = waiting.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS);
                assertThat(got).isEqualTo(a.find("job").orElseThrow());
                assertThat(got.isReleased()).isFalse();
                LeaseFixture.awaitQueued(db, table, 0);
                b.release(got);
            }
            assertThat(b.probe().handOffsReceived())
                    .as("each read by the woken connection, none by a look")
                    .isEqualTo(3);
        }
    }

    /**
     * A release that nobody waited for is the plain one-row update (the hand-off statement, an insert that
     * selects from its own table, costs about twice as much); a refused waiter marks the lease row past its
     * queue entry's life, and the next release hands the lease on, then goes on to hand it on directly while
     * the row says a waiter may be queued.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aReleaseNobodyWaitedForIsThePlainUpdateAndAWaiterMarksTheRowForTheHandOff(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        List<String> prepared = new CopyOnWriteArrayList<>();
        String handOff = "UPDATE " + table + " SET token = token + 1, owner = ?"; // the hand-off (read first)
        try (LeaseService a =
                        LeaseFixture.service(db, LeaseFixture.recordingStatements(db.newPool(3), prepared), table);
                LeaseService b = polledRarely(db, db.newPool(3), table)) {
            for (int i = 0; i < 3; i++) {
                a.release(a.tryAcquire("job", "a", LONG).orElseThrow());
            }
            assertThat(prepared)
                    .as("plain releases")
                    .noneMatch(sql -> sql.startsWith(handOff))
                    .filteredOn(sql -> sql.startsWith("UPDATE " + table + " SET broken_by = NULL"))
                    .hasSize(3);
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + " WHERE waiters_until IS NULL"))
                    .isOne();

            Lease held = a.acquire("job", "a", LONG, LONG);
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + " WHERE waiters_until IS NULL"))
                    .as("a look that grants marks nothing")
                    .isOne();
            CompletableFuture<Lease> waiting = LeaseFixture.lockAsync(b, "job", "b", LONG, POLL);
            LeaseFixture.awaitPublished(db, table, 1);
            LeaseFixture.awaitAsleepUntilWoken("b");
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + " l JOIN " + table + "_queue q ON q.name = l.name"
                            + " WHERE l.waiters_until >= q.wait_until"))
                    .as("the mark outlives the entry")
                    .isOne();
            prepared.clear();
            a.release(held);
            assertThat(db.queryString("SELECT owner FROM " + table + " WHERE name = 'job'"))
                    .isEqualTo("b");
            assertThat(prepared)
                    .as("the plain release matched nothing; the hand-off followed")
                    .filteredOn(sql ->
                            sql.startsWith(handOff) || sql.startsWith("UPDATE " + table + " SET broken_by = NULL"))
                    .hasSize(2)
                    .last()
                    .matches(sql -> sql.startsWith(handOff));
            Lease got = waiting.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS);
            assertThat(got.token()).isEqualTo(held.token() + 1);
            b.release(got);

            held = a.tryAcquire("job", "a", LONG).orElseThrow();
            prepared.clear();
            a.release(held);
            assertThat(prepared)
                    .as("while the row is marked, straight to the hand-off: no waiter read, so the one"
                            + " statement, whose locks no join can pass")
                    .satisfiesExactly(
                            read -> assertThat(read).startsWith("SELECT q.owner, q.lease_owner"),
                            one -> assertThat(one)
                                    .startsWith("INSERT INTO " + table + " (name, owner, token, acquired_at,"
                                            + " expires_at, handed_to, served)"));
            assertThat(db.queryLong("SELECT expires_at <= UTC_TIMESTAMP(6) FROM " + table + " WHERE name = 'job'"))
                    .as("nobody left to hand it to: released")
                    .isOne();
            String before = LeaseFixture.dump(db, table);
            Lease released = held;
            assertThatThrownBy(() -> a.release(released)).isInstanceOf(LeaseNotHeldException.class);
            assertThat(LeaseFixture.dump(db, table))
                    .as("a release of a grant not held changes nothing")
                    .isEqualTo(before);
        }
    }

    /**
     * A waiter for a name whose last release by its service had waiters joins the queue, then reads (without a lock)
     * whether it can only wait, instead of the queued acquire that locks the lease row. While the row's mark does not
     * last as long as its entry, it takes the queued acquire, which raises the mark. Either way the release hands
     * it the lease.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aWaiterForAContendedNameReadsInsteadOfLockingTheLeaseRow(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        List<String> prepared = new CopyOnWriteArrayList<>();
        String waitsOn = "SELECT 1 FROM " + table + " l JOIN " + table + "_queue q";
        String queuedAcquire = "INSERT INTO " + table + " (name, owner, token, acquired_at, expires_at) VALUES";
        try (LeaseService a = polledRarely(db, db.newPool(3), table);
                LeaseService b = polledRarely(db, LeaseFixture.recordingStatements(db.newPool(3), prepared), table)) {
            for (boolean marked : new boolean[] {true, false}) {
                Lease fromB = b.acquire("job", "b", LONG, LONG);
                CompletableFuture<Lease> toA = LeaseFixture.lockAsync(a, "job", "a", LONG, POLL);
                LeaseFixture.awaitPublished(db, table, 1);
                LeaseFixture.awaitAsleepUntilWoken("a");
                b.release(fromB); // with a waiter: the name is contended for b now
                Lease held = toA.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS);
                LeaseFixture.awaitQueued(db, table, 0);
                db.execute("UPDATE " + table + " SET waiters_until = "
                        + (marked ? "UTC_TIMESTAMP(6) + INTERVAL 1 HOUR" : "UTC_TIMESTAMP(6)"));
                prepared.clear();
                CompletableFuture<Lease> toB = LeaseFixture.lockAsync(b, "job", "b", LONG, POLL);
                LeaseFixture.awaitPublished(db, table, 1);
                LeaseFixture.awaitAsleepUntilWoken("b");
                await("b's wake-up connection watching")
                        .atMost(LeaseFixture.AT_MOST)
                        .until(() -> b.probe().wakeUpWatching());
                List<String> attempts = prepared.stream()
                        .filter(sql -> sql.startsWith(waitsOn) || sql.startsWith(queuedAcquire))
                        .toList();
                if (marked) {
                    assertThat(attempts).as("only reads").isNotEmpty().allMatch(sql -> sql.startsWith(waitsOn));
                } else {
                    assertThat(attempts)
                            .as("read, then the queued acquire")
                            .hasSizeGreaterThanOrEqualTo(2)
                            .first()
                            .matches(sql -> sql.startsWith(waitsOn));
                    assertThat(attempts).anyMatch(sql -> sql.startsWith(queuedAcquire) && sql.contains("NOT EXISTS"));
                    assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + " l JOIN " + table
                                    + "_queue q ON q.name = l.name" + " WHERE l.waiters_until >= q.wait_until"))
                            .as("the queued acquire raised the mark")
                            .isOne();
                }
                a.release(held);
                Lease got = toB.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS); // a poll would take minutes
                assertThat(got.token()).as("handed on: marked %s", marked).isEqualTo(held.token() + 1);
                b.release(got);
                LeaseFixture.awaitQueued(db, table, 0);
            }
        }
    }

    /** Two waiters of two services: the release hands the lease to the first, whose release hands it to the second. */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void theLeaseGoesToTheWaitersInTheirOrder(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService a = LeaseFixture.service(db, db.newPool(3), table);
                LeaseService b = LeaseFixture.service(db, db.newPool(3), table);
                LeaseService c = LeaseFixture.service(db, db.newPool(3), table)) {
            Lease held = a.acquire("job", "a", LONG, LONG);
            CompletableFuture<Lease> first = LeaseFixture.lockAsync(b, "job", "b", LONG, LONG);
            LeaseFixture.awaitPublished(db, table, 1);
            CompletableFuture<Lease> second = LeaseFixture.lockAsync(c, "job", "c", LONG, LONG);
            LeaseFixture.awaitPublished(db, table, 2);
            a.release(held);
            assertThat(db.queryString("SELECT owner FROM " + table + " WHERE name = 'job'"))
                    .isEqualTo("b");
            Lease toB = first.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS);
            assertThat(second).isNotDone();
            b.release(toB);
            assertThat(db.queryString("SELECT owner FROM " + table + " WHERE name = 'job'"))
                    .isEqualTo("c");
            Lease toC = second.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS);
            assertThat(toC.token()).isEqualTo(toB.token() + 1).isEqualTo(held.token() + 2);
            c.release(toC);
        }
    }

    /**
     * The release wakes only the service whose waiter it handed the lease to: the other waiting service's
     * connection sleeps on, uninterrupted (no chain of sleepers that wake, look and sleep again), and its
     * waiter is handed the lease at the next release.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aReleaseWakesOnlyTheServiceOfTheWaiterItHandedTheLeaseTo(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        List<String> prepared = new CopyOnWriteArrayList<>();
        try (LeaseService a = LeaseFixture.service(db, db.newPool(3), table);
                LeaseService b = polledRarely(db, db.newPool(3), table);
                LeaseService c = polledRarely(db, LeaseFixture.recordingStatements(db.newPool(3), prepared), table)) {
            Lease held = a.acquire("job", "a", LONG, LONG);
            CompletableFuture<Lease> toC = LeaseFixture.lockAsync(c, "job", "c", LONG, POLL);
            LeaseFixture.awaitPublished(db, table, 1);
            LeaseFixture.awaitAsleepUntilWoken("c");
            CompletableFuture<Lease> toB = LeaseFixture.lockAsync(b, "job", "b", LONG, POLL);
            LeaseFixture.awaitPublished(db, table, 2);
            LeaseFixture.awaitAsleepUntilWoken("b");
            await().atMost(LeaseFixture.AT_MOST)
                    .until(() -> b.probe().wakeUpWatching() && c.probe().wakeUpWatching());
            // b's waiter goes first in the lease's queue, though c's came first.
            db.execute(
                    "UPDATE " + table + "_queue SET queued_at = queued_at + INTERVAL 1 SECOND WHERE lease_owner = 'c'");
            long cConnection = db.queryLong("SELECT listener FROM " + table + "_queue WHERE lease_owner = 'c'");
            await("c's connection asleep in its watch")
                    .atMost(LeaseFixture.AT_MOST)
                    .pollInterval(Duration.ofMillis(5))
                    .until(() -> db.queryLong(
                                    "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ? AND INFO LIKE ?",
                                    cConnection,
                                    "%holdfast_bell_%")
                            == 1);
            prepared.clear();

            a.release(held);
            assertThat(db.queryString("SELECT owner FROM " + table + " WHERE name = 'job'"))
                    .isEqualTo("b");
            Lease got = toB.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS);
            assertThat(got.token()).isEqualTo(held.token() + 1);
            assertThat(b.probe().handOffsReceived())
                    .as("read by b's woken connection, not by a look")
                    .isEqualTo(1);
            assertThat(prepared)
                    .as("c's connection: no read of a hand-off")
                    .noneMatch(sql -> sql.contains("SELECT l.name, q.owner"));
            assertThat(toC).isNotDone();

            b.release(got);
            Lease next = toC.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS);
            assertThat(next.token()).isEqualTo(got.token() + 1);
            assertThat(c.probe().handOffsReceived()).isEqualTo(1);
            c.release(next);
        }
    }

    /**
     * A batched release leaves a lease that a waiter may wait for (the row's mark) to a release of its own,
     * which hands it on and wakes the waiter's service: the batch statement frees nothing, the hand-off follows.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aBatchedReleaseLeavesAWaitedForLeaseToTheReleaseThatHandsItOn(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        List<String> prepared = new CopyOnWriteArrayList<>();
        String handOff = "UPDATE " + table + " SET token = token + 1, owner = ?"; // the hand-off (read first)
        try (LeaseService a = LeaseFixture.builder(db, LeaseFixture.recordingStatements(db.newPool(3), prepared))
                        .table(table)
                        .batching(Batching.CONCURRENT)
                        .tune(t -> t.batchLoneCalls(true))
                        .build();
                LeaseService b = polledRarely(db, db.newPool(3), table)) {
            Lease held = a.tryAcquire("job", "a", LONG).orElseThrow();
            CompletableFuture<Lease> waiting = LeaseFixture.lockAsync(b, "job", "b", LONG, POLL);
            LeaseFixture.awaitPublished(db, table, 1);
            LeaseFixture.awaitAsleepUntilWoken("b");
            prepared.clear();
            a.release(held);
            assertThat(prepared)
                    .as("the batch, then the hand-off")
                    .filteredOn(sql -> sql.startsWith("INSERT INTO " + table + " ") || sql.startsWith(handOff))
                    .hasSize(2)
                    .satisfiesExactly(
                            batch -> assertThat(batch).endsWith("RETURNING name, FALSE"),
                            single -> assertThat(single).startsWith(handOff));
            assertThat(db.queryString("SELECT owner FROM " + table + " WHERE name = 'job'"))
                    .isEqualTo("b");
            Lease got = waiting.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS);
            assertThat(got.token()).isEqualTo(held.token() + 1);
            assertThat(b.probe().handOffsReceived())
                    .as("read by b's woken connection")
                    .isEqualTo(1);
            b.release(got);
        }
    }

    /**
     * Re-verifies what the served mark relies on: a join whose commit comes late (its statement, and its
     * time, began before a later waiter's, which committed first) is still served in its turn. The
     * release's locking read of the queue waits for the uncommitted entry, so it does not hand the lease
     * to the later waiter and leave the first behind the mark, where no hand-off would reach it.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aWaiterWhoseJoinCommitsLateIsNotLeftBehindTheServedMark(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        LeaseStore jdbc = LeaseStores.forDialect(Dialect.MARIADB, table);
        PollingLeaseSql sql = (PollingLeaseSql) jdbc.sql();
        try (Connection c = db.connection();
                Connection alive = LeaseFixture.unpooled(db);
                Connection slow = db.connection()) {
            int live = (int) takeLiveLock(alive);
            LeaseRow held = jdbc.acquire(c, "job", "a", MINUTE_MICROS, false).orElseThrow();
            slow.setAutoCommit(false);
            try {
                join(db, table, slow, sql, "waiter-slow", "slow", live); // its statement is done, its commit is not
                try (Connection late = db.connection()) {
                    join(db, table, late, sql, "waiter-late", "late", live);
                }
                // On a thread of its own, not the common pool (of one thread on two cores), which another task may
                // hold.
                CompletableFuture<Boolean> release = new CompletableFuture<>();
                new Thread(
                                () -> {
                                    try (Connection r = db.connection()) {
                                        release.complete(jdbc.release(r, "job", "a", held.token(), false, null));
                                    } catch (Throwable e) {
                                        release.completeExceptionally(e);
                                    }
                                },
                                "test-release-a")
                        .start();
                await("the release done, or waiting for a lock")
                        .atMost(LeaseFixture.AT_MOST)
                        .pollInterval(Duration.ofMillis(5))
                        .until(() -> release.isDone()
                                || LockViews.read(
                                                db,
                                                () -> db.queryLong(
                                                        "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'"
                                                                + " AND trx_query LIKE ?",
                                                        "%" + table + "%"))
                                        > 0);
                slow.commit();
                assertThat(release.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS))
                        .isTrue();
            } finally {
                slow.rollback();
                slow.setAutoCommit(true);
            }
            assertThat(db.queryString("SELECT handed_to FROM " + table + " WHERE name = 'job'"))
                    .isEqualTo("waiter-slow");
            LeaseRow toSlow = jdbc.read(c, "job").orElseThrow();
            assertThat(jdbc.release(c, "job", "slow", toSlow.token(), false, null))
                    .isTrue();
            assertThat(db.queryString("SELECT handed_to FROM " + table + " WHERE name = 'job'"))
                    .isEqualTo("waiter-late");
        }
    }

    /**
     * A waiting entry found at or behind the served mark (its place from a database clock that stepped
     * back, say) would never be handed the lease, and while releases hand it on, its look would never find
     * it free: its next look moves it behind the mark, and it is served in its turn.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aWaitingEntryBehindTheServedMarkJoinsAgainAtItsNextLook(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        LeaseStore jdbc = LeaseStores.forDialect(Dialect.MARIADB, table);
        try (Connection c = db.connection();
                Connection alive = LeaseFixture.unpooled(db)) {
            int live = (int) takeLiveLock(alive);
            LeaseRow held = jdbc.acquire(c, "job", "a", MINUTE_MICROS, false).orElseThrow();
            queueWaiter(db, table, "waiter-c", "c", (long) live);
            queueWaiter(db, table, "waiter-x", "x", (long) live);
            db.execute("UPDATE " + table + "_queue SET queued_at = queued_at - INTERVAL 1 HOUR"); // x before now
            // The mark at c's place: as if a clock step had put c's entry behind a grant that came after it.
            db.execute(
                    "UPDATE " + table + " SET served = (SELECT CONCAT(DATE_FORMAT(queued_at, '%Y%m%d%H%i%s%f'), owner)"
                            + " FROM " + table + "_queue WHERE owner = 'waiter-c')");
            String served = db.queryString("SELECT served FROM " + table);

            assertThat(attempt(jdbc, c, "c", true, live))
                    .as("refused: a holds the lease")
                    .isEmpty();
            assertThat(db.queryLong(
                            "SELECT CONCAT(DATE_FORMAT(queued_at, '%Y%m%d%H%i%s%f'), owner) > ? FROM " + table
                                    + "_queue WHERE owner = 'waiter-c'",
                            served))
                    .as("c's entry behind the mark")
                    .isOne();
            assertThat(db.queryString("SELECT served FROM " + table))
                    .as("the mark unchanged")
                    .isEqualTo(served);

            assertThat(jdbc.release(c, "job", "a", held.token(), false, null)).isTrue();
            assertThat(db.queryString("SELECT handed_to FROM " + table)).isEqualTo("waiter-x");
            LeaseRow toX = jdbc.read(c, "job").orElseThrow();
            assertThat(jdbc.release(c, "job", "x", toX.token(), false, null)).isTrue();
            assertThat(db.queryString("SELECT handed_to FROM " + table))
                    .as("c, in its turn")
                    .isEqualTo("waiter-c");
            assertThat(db.queryString("SELECT owner FROM " + table)).isEqualTo("c");
        }
    }

    /**
     * The queue's stored place (column {@code place}, generated by the server) is the string the served mark holds:
     * {@code queued_at} in 20 digits, then the waiter id, for every year and microsecond and for waiter ids
     * that differ only in case, accents or trailing spaces; it follows a moved entry, and its order is
     * {@code ORDER BY queued_at, owner}.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void theStoredPlaceIsTheArrivalOrderString(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        String queue = table + "_queue";
        List<String> times = List.of(
                "0999-01-02 03:04:05.000007",
                "2026-11-29 00:00:00.000000",
                "2026-11-29 00:00:00.000001",
                "9999-12-30 23:59:59.999999");
        List<String> waiters = List.of("a", "A", "\u00e4", "a ", "b");
        for (String at : times) {
            for (String waiter : waiters) {
                db.execute(
                        "INSERT INTO " + queue + " (name, owner, queued_at, wait_until) VALUES ('job', ?, ?, ?)",
                        waiter + "@" + at,
                        at,
                        at);
            }
        }
        String expected = "CONCAT(DATE_FORMAT(queued_at, '%Y%m%d%H%i%s%f'), owner)";
        assertThat(db.queryLong("SELECT COUNT(*) FROM " + queue + " WHERE place = " + expected))
                .isEqualTo(20);
        db.execute("UPDATE " + queue + " SET queued_at = queued_at + INTERVAL 1 MICROSECOND WHERE owner LIKE 'b@%'");
        assertThat(db.queryLong("SELECT COUNT(*) FROM " + queue + " WHERE place = " + expected))
                .as("moved entries too")
                .isEqualTo(20);
        assertThat(db.queryString("SELECT GROUP_CONCAT(owner ORDER BY place SEPARATOR '|') FROM " + queue))
                .isEqualTo(db.queryString(
                        "SELECT GROUP_CONCAT(owner ORDER BY queued_at, owner SEPARATOR '|') FROM " + queue));
    }

    /** Joins the queue on {@code c}, after the committed mark of the refused attempt that comes before a join. */
    private static void join(
            TestDatabase db, String table, Connection c, PollingLeaseSql sql, String waiter, String owner, int listener)
            throws SQLException {
        markWaitedFor(db, table);
        try (PreparedStatement ps = c.prepareStatement(sql.joinQueueSql())) {
            sql.bindJoin(ps, "job", waiter, MINUTE_MICROS, owner, 42_000_000, listener);
            ps.executeUpdate();
        }
    }

    /**
     * A release through the waiter's own service hands the lease to it and wakes it at once, though
     * the waiter polls every ten minutes.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aReleaseThroughTheWaitersOwnServiceHandsItTheLeaseAndWakesIt(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService same = polledRarely(db, db.newPool(3), table)) {
            Lease held = same.tryAcquire("job", "a", LONG).orElseThrow();
            CompletableFuture<Lease> waiting = LeaseFixture.lockAsync(same, "job", "b", LONG, POLL);
            LeaseFixture.awaitPublished(db, table, 1);
            LeaseFixture.awaitAsleepUntilWoken("b");
            same.release(held);
            Lease got = waiting.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS);
            assertThat(got.owner()).isEqualTo("b");
            assertThat(got.token()).isEqualTo(held.token() + 1);
            same.release(got);
        }
    }

    /**
     * The first waiter is handed the lease only while its service's wake-up connection holds its live lock:
     * an entry that published none, or a connection that is gone (a crashed process), is not handed the
     * lease, nor skipped; the release leaves the lease free, as a plain release. With the lock held, it is.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void onlyAWaiterWhoseServiceIsAliveIsHandedTheLease(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        LeaseStore jdbc = LeaseStores.forDialect(Dialect.MARIADB, table);
        long gone;
        try (Connection dead = LeaseFixture.unpooled(db)) { // closed: its session and lock end
            gone = takeLiveLock(dead);
        }
        try (Connection c = db.connection();
                Connection alive = LeaseFixture.unpooled(db)) {
            long live = takeLiveLock(alive);
            for (Long listener : new Long[] {null, gone}) {
                LeaseRow held =
                        jdbc.acquire(c, "job", "a", MINUTE_MICROS, false).orElseThrow();
                queueWaiter(db, table, "waiter-x", "x", listener);
                queueWaiter(db, table, "waiter-y", "y", live); // behind x: not handed the lease either
                assertThat(jdbc.release(c, "job", "a", held.token(), false, null))
                        .isTrue();
                assertThat(db.queryString("SELECT owner FROM " + table + " WHERE name = 'job'"))
                        .isEqualTo("a");
                assertThat(db.queryLong("SELECT token FROM " + table + " WHERE name = 'job'"))
                        .isEqualTo(held.token());
                assertThat(db.queryLong("SELECT expires_at = acquired_at FROM " + table + " WHERE name = 'job'"))
                        .as("released")
                        .isOne();
                assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + " WHERE handed_to IS NOT NULL"))
                        .isZero();
                db.execute("DELETE FROM " + table + "_queue");
            }
            LeaseRow held = jdbc.acquire(c, "job", "a", MINUTE_MICROS, false).orElseThrow();
            queueWaiter(db, table, "waiter-x", "x", live);
            assertThat(jdbc.release(c, "job", "a", held.token(), false, null)).isTrue();
            assertThat(db.queryString("SELECT owner FROM " + table + " WHERE name = 'job'"))
                    .isEqualTo("x");
            assertThat(db.queryString("SELECT handed_to FROM " + table + " WHERE name = 'job'"))
                    .isEqualTo("waiter-x");
            assertThat(db.queryLong("SELECT token FROM " + table + " WHERE name = 'job'"))
                    .isEqualTo(held.token() + 1);
            assertThat(db.queryLong("SELECT TIMESTAMPDIFF(SECOND, acquired_at, expires_at) FROM " + table
                            + " WHERE name = 'job'"))
                    .as("the waiter's TTL")
                    .isEqualTo(42);
        }
    }

    /**
     * A release reads the first waiter, then hands it the lease in a second statement that checks again: a first
     * waiter that gives up between the two is passed by, and the release's one statement hands the lease to the next
     * waiter instead (token + 1, once), not to the waiter that left, and not to nobody.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aWaiterThatLeavesBetweenTheReleasesReadAndItsHandOffIsPassedBy(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        LeaseStore jdbc = LeaseStores.forDialect(Dialect.MARIADB, table);
        List<String> ran = new CopyOnWriteArrayList<>();
        try (var pool = db.newPool(2);
                Connection alive = LeaseFixture.unpooled(db)) {
            DataSource hooked = LeaseFixture.hooked(pool, (sql, statement) -> {
                if (sql.startsWith("UPDATE " + table + " SET token = token + 1, owner = ?")
                        && !ran.contains("x leaves")) {
                    ran.add("x leaves");
                    try (Connection other = db.connection()) {
                        jdbc.giveUp(other, "job", "waiter-x", false);
                    }
                }
                ran.add(
                        sql.startsWith("SELECT q.owner, q.lease_owner")
                                ? "read the first waiter"
                                : sql.startsWith("UPDATE " + table + " SET token = token + 1")
                                        ? "hand it the lease"
                                        : sql.startsWith("INSERT INTO " + table
                                                        + " (name, owner, token, acquired_at, expires_at, handed_to")
                                                ? "the one statement"
                                                : sql.startsWith("UPDATE " + table + " SET broken_by")
                                                        ? "the plain release"
                                                        : "other");
                return statement.call();
            });
            long live = takeLiveLock(alive);
            try (Connection c = hooked.getConnection()) {
                LeaseRow held =
                        jdbc.acquire(c, "job", "a", MINUTE_MICROS, false).orElseThrow();
                queueWaiter(db, table, "waiter-x", "x", live);
                queueWaiter(db, table, "waiter-y", "y", live);
                ran.clear();
                assertThat(jdbc.release(c, "job", "a", held.token(), false, null))
                        .isTrue();
                assertThat(ran)
                        .as("the plain release matches nothing (a waiter may be queued); read, x leaves, the"
                                + " update matches nothing, the one statement hands on")
                        .startsWith(
                                "the plain release",
                                "read the first waiter",
                                "x leaves",
                                "hand it the lease",
                                "the one statement");
                assertThat(db.queryString("SELECT owner FROM " + table + " WHERE name = 'job'"))
                        .isEqualTo("y");
                assertThat(db.queryString("SELECT handed_to FROM " + table + " WHERE name = 'job'"))
                        .isEqualTo("waiter-y");
                assertThat(db.queryLong("SELECT token FROM " + table + " WHERE name = 'job'"))
                        .isEqualTo(held.token() + 1);
                assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + "_queue WHERE owner = 'waiter-x'"))
                        .isZero();
            }
        }
    }

    /**
     * A waiter that gives up just as it is handed the lease gives it back (the lease is free, not held
     * by nobody until its TTL); a waiter whose call returned its grant only leaves its entry. A release
     * that does not match (wrong token) hands nothing on and changes nothing.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aWaiterThatGaveUpGivesBackAGrantHandedToIt(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        LeaseStore jdbc = LeaseStores.forDialect(Dialect.MARIADB, table);
        try (Connection c = db.connection();
                Connection alive = LeaseFixture.unpooled(db)) {
            long live = takeLiveLock(alive);
            LeaseRow held = jdbc.acquire(c, "job", "a", MINUTE_MICROS, false).orElseThrow();
            queueWaiter(db, table, "waiter-x", "x", live);
            String before = LeaseFixture.dump(db, table);
            assertThat(jdbc.release(c, "job", "a", held.token() + 1, false, null))
                    .as("not that grant")
                    .isFalse();
            assertThat(jdbc.release(c, "job", "z", null, false, null))
                    .as("not that owner")
                    .isFalse();
            assertThat(LeaseFixture.dump(db, table)).isEqualTo(before);
            assertThat(jdbc.release(c, "job", "a", held.token(), false, null)).isTrue();
            assertThat(db.queryString("SELECT owner FROM " + table + " WHERE name = 'job'"))
                    .isEqualTo("x");
            jdbc.giveUp(c, "job", "waiter-x", false);
            assertThat(db.queryLong("SELECT expires_at <= UTC_TIMESTAMP(6) FROM " + table + " WHERE name = 'job'"))
                    .as("given back")
                    .isOne();
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + "_queue")).isZero();
            LeaseRow next = jdbc.acquire(c, "job", "a", MINUTE_MICROS, false).orElseThrow();
            assertThat(next.token()).isEqualTo(held.token() + 2);
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + " WHERE handed_to IS NOT NULL"))
                    .as("a grant clears handed_to: only the waiter it was handed to takes a handed grant")
                    .isZero();
            queueWaiter(db, table, "waiter-y", "y", live);
            assertThat(jdbc.release(c, "job", "a", next.token(), false, null)).isTrue();
            jdbc.giveUp(c, "job", "waiter-y", true); // its call returned the grant: the entry goes, the grant stays
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + "_queue")).isZero();
            assertThat(db.queryString("SELECT owner FROM " + table + " WHERE name = 'job'"))
                    .isEqualTo("y");
            assertThat(db.queryLong("SELECT expires_at > UTC_TIMESTAMP(6) FROM " + table + " WHERE name = 'job'"))
                    .isOne();
        }
    }

    /**
     * The waiter the lease was last handed to is not handed it again by the next release, although its
     * entry is still there (it leaves after its call returned): the next live waiter is.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void theWaiterHandedTheLeaseIsNotItsOwnSuccessor(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        LeaseStore jdbc = LeaseStores.forDialect(Dialect.MARIADB, table);
        try (Connection c = db.connection();
                Connection alive = LeaseFixture.unpooled(db)) {
            long live = takeLiveLock(alive);
            LeaseRow held = jdbc.acquire(c, "job", "a", MINUTE_MICROS, false).orElseThrow();
            queueWaiter(db, table, "waiter-x", "x", live);
            queueWaiter(db, table, "waiter-y", "y", live);
            assertThat(jdbc.release(c, "job", "a", held.token(), false, null)).isTrue();
            assertThat(db.queryString("SELECT owner FROM " + table + " WHERE name = 'job'"))
                    .isEqualTo("x");
            assertThat(jdbc.release(c, "job", "x", held.token() + 1, false, null))
                    .isTrue();
            assertThat(db.queryString("SELECT owner FROM " + table + " WHERE name = 'job'"))
                    .isEqualTo("y");
            assertThat(db.queryString("SELECT handed_to FROM " + table + " WHERE name = 'job'"))
                    .isEqualTo("waiter-y");
            assertThat(db.queryLong("SELECT token FROM " + table + " WHERE name = 'job'"))
                    .isEqualTo(held.token() + 2);
        }
    }

    /**
     * A waiter granted by a look of its own keeps its entry until after its call returned (here: for good):
     * that entry is neither handed the lease at the next release nor holds a later waiter back, as the
     * served mark has passed it. (Without the mark, a benchmark run handed the lease to such an entry, and
     * it sat unused for its whole TTL.)
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void theEntryOfAWaiterGrantedByItsOwnLookIsNeverHandedTheLease(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        LeaseStore jdbc = LeaseStores.forDialect(Dialect.MARIADB, table);
        try (Connection c = db.connection();
                Connection alive = LeaseFixture.unpooled(db)) {
            int live = (int) takeLiveLock(alive);
            assertThat(attempt(jdbc, c, "w", false, live))
                    .as("w finds the lease free")
                    .isPresent();
            assertThat(attempt(jdbc, c, "x", false, live))
                    .as("x is refused and joins")
                    .isEmpty();
            assertThat(jdbc.forceRelease(c, "job", "operator"))
                    .as("hands nothing on")
                    .isTrue();
            assertThat(db.queryString("SELECT owner FROM " + table + " WHERE name = 'job'"))
                    .isEqualTo("w");
            assertThat(attempt(jdbc, c, "x", true, live)).as("x's own look").isPresent();
            queueWaiter(db, table, "waiter-y", "y", (long) live);
            assertThat(jdbc.release(c, "job", "x", token(db, table), false, null))
                    .isTrue();
            assertThat(db.queryString("SELECT owner FROM " + table + " WHERE name = 'job'"))
                    .as("handed to y")
                    .isEqualTo("y");
            assertThat(jdbc.release(c, "job", "y", token(db, table), false, null))
                    .isTrue();
            assertThat(db.queryLong("SELECT expires_at > UTC_TIMESTAMP(6) FROM " + table + " WHERE name = 'job'"))
                    .as("free: x's entry, still there, is not handed the lease")
                    .isZero();
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + "_queue")).isEqualTo(2);
            assertThat(attempt(jdbc, c, "v", false, live))
                    .as("nor do x's and y's entries hold a later waiter back")
                    .isPresent();
        }
    }

    /** A queued attempt of waiter {@code waiter-<owner>} that leaves its entry in place when granted. */
    private static java.util.Optional<LeaseRow> attempt(
            LeaseStore jdbc, Connection c, String owner, boolean joined, Integer listener) throws SQLException {
        return jdbc.acquireOrQueue(
                c, "job", owner, "waiter-" + owner, MINUTE_MICROS, MINUTE_MICROS, joined, true, false, listener);
    }

    private static long token(TestDatabase db, String table) throws SQLException {
        return db.queryLong("SELECT token FROM " + table + " WHERE name = 'job'");
    }

    /** Takes the live lock on {@code c} as a wake-up connection does; returns its connection id. */
    private static long takeLiveLock(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                        "SELECT GET_LOCK(CONCAT('holdfast_live_', CONNECTION_ID()), 0), CONNECTION_ID()");
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            assertThat(rs.getLong(1)).isOne();
            return rs.getLong(2);
        }
    }

    /**
     * A queue entry for lease owner {@code owner} with a 42 s TTL, live for a minute, 1 ms after the last one;
     * the lease row marked first, as by the refused attempt that comes before a join.
     */
    private static void queueWaiter(TestDatabase db, String table, String waiter, String owner, Long listener)
            throws SQLException {
        markWaitedFor(db, table);
        db.execute(
                "INSERT INTO " + table
                        + "_queue (name, owner, queued_at, wait_until, lease_owner, ttl_micros, listener)"
                        + " SELECT 'job', ?, COALESCE(MAX(queued_at), UTC_TIMESTAMP(6)) + INTERVAL 1000 MICROSECOND,"
                        + " UTC_TIMESTAMP(6) + INTERVAL 1 MINUTE, ?, 42000000, ? FROM " + table + "_queue",
                waiter,
                owner,
                listener);
    }

    /** What a refused queued attempt does to the lease row: a waiter may be queued for a minute and a second. */
    private static void markWaitedFor(TestDatabase db, String table) throws SQLException {
        db.execute("UPDATE " + table + " SET waiters_until = GREATEST(COALESCE(waiters_until, UTC_TIMESTAMP(6)),"
                + " UTC_TIMESTAMP(6) + INTERVAL 61 SECOND) WHERE name = 'job'");
    }
}
