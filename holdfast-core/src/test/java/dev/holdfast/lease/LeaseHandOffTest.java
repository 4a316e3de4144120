package dev.holdfast.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.lease.internal.LeaseRow;
import dev.holdfast.lease.internal.LeaseStore;
import dev.holdfast.lease.internal.LeaseStores;
import dev.holdfast.lease.internal.PgLeaseSql;
import dev.holdfast.lease.internal.PgWakeUps;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Direct hand-off on PostgreSQL: a release grants a free lease to the first live waiter in its own
 * transaction and notifies it with the grant, so the waiter runs no statement to take it.
 */
class LeaseHandOffTest {

    private static final Duration LONG = Duration.ofSeconds(30);

    /**
     * With the safety poll at a minute, the waiter makes no attempt after queueing: the row the
     * release returns from is already the waiter's grant (handed_to still names it, as no attempt
     * picked it up), and the waiter's lease is exactly that row.
     */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void theReleaseCommitsTheWaitersGrantAndTheWaiterRunsNoStatementToTakeIt(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService a = LeaseFixture.service(db, db.newPool(2), table);
                LeaseService b = LeaseFixture.builder(db, db.newPool(2))
                        .table(table)
                        .tune(t -> t.safetyPoll(Duration.ofMinutes(1)))
                        .build()) {
            for (int round = 0; round < 3; round++) {
                Lease held = a.tryAcquire("job", "a", LONG).orElseThrow();
                CompletableFuture<Lease> waiting = LeaseFixture.lockAsync(b, "job", "b", LONG, Duration.ofSeconds(20));
                LeaseFixture.awaitListenedEntry(db, table);
                a.release(held);
                assertThat(db.queryString("SELECT owner FROM " + table + " WHERE name = 'job'"))
                        .isEqualTo("b");
                assertThat(db.queryString("SELECT handed_to FROM " + table + " WHERE name = 'job'"))
                        .isNotNull();
                assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + "_queue"))
                        .as("the entry was consumed")
                        .isZero();
                Lease got = waiting.get(10, TimeUnit.SECONDS);
                Lease row = a.find("job").orElseThrow();
                assertThat(got).isEqualTo(row);
                assertThat(got.token()).isEqualTo(held.token() + 1);
                assertThat(got.isReleased()).isFalse();
                b.release(got);
            }
            assertThat(b.probe().handOffsReceived()).isEqualTo(3);
        }
    }

    /**
     * The queue costs a release nothing when nobody waits: one statement, as a plain release; with a
     * waiter queued (which marked the lease row), the release is followed by the hand-off.
     */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void aReleaseIsOneStatementWhenNobodyWaits(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        List<String> prepared = new CopyOnWriteArrayList<>();
        HikariDataSource pool = db.newPool(2);
        DataSource recording = LeaseFixture.recordingStatements(pool, prepared);
        try (LeaseService a = LeaseFixture.builder(db, recording).table(table).build();
                LeaseService b = LeaseFixture.builder(db, db.newPool(2))
                        .table(table)
                        .tune(t -> t.safetyPoll(Duration.ofMinutes(1)))
                        .build()) {
            Lease held = a.tryAcquire("job", "a", LONG).orElseThrow();
            prepared.clear();
            a.release(held);
            assertThat(prepared).hasSize(1);
            assertThat(prepared.get(0)).startsWith("UPDATE").doesNotContain(";");

            held = a.tryAcquire("job", "a", LONG).orElseThrow();
            CompletableFuture<Lease> waiting = LeaseFixture.lockAsync(b, "job", "b", LONG, Duration.ofSeconds(20));
            LeaseFixture.awaitListenedEntry(db, table);
            prepared.clear();
            a.release(held);
            assertThat(prepared).hasSize(2);
            assertThat(prepared.get(1)).contains("pg_notify");
            Lease got = waiting.get(10, TimeUnit.SECONDS);
            assertThat(got.token()).isEqualTo(held.token() + 1);
            assertThat(b.probe().handOffsReceived()).isEqualTo(1);
            // The last waiter was handed the lease: the row no longer says that someone waits.
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + " WHERE waiters_until IS NOT NULL"))
                    .isZero();
            b.release(got);
            held = a.tryAcquire("job", "a", LONG).orElseThrow();
            prepared.clear();
            a.release(held);
            assertThat(prepared)
                    .as("its last release found waiters: the hand-off goes in the same round trip")
                    .hasSize(1);
            assertThat(prepared.get(0)).startsWith("UPDATE").contains("pg_notify");
            held = a.tryAcquire("job", "a", LONG).orElseThrow();
            prepared.clear();
            a.release(held);
            assertThat(prepared)
                    .as("nobody waited then: one plain statement again")
                    .hasSize(1);
            assertThat(prepared.get(0)).doesNotContain(";");

            // A waiter that gives up, with nobody behind it: the row is cleared too.
            held = a.tryAcquire("job", "a", LONG).orElseThrow();
            assertThat(org.assertj.core.api.Assertions.catchThrowable(
                            () -> b.acquire("job", "b", LONG, Duration.ofMillis(300))))
                    .isInstanceOf(LeaseTimeoutException.class);
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + "_queue")).isZero();
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + " WHERE waiters_until IS NOT NULL"))
                    .isZero();
            prepared.clear();
            a.release(held);
            assertThat(prepared).hasSize(1);
        } finally {
            pool.close();
        }
    }

    /**
     * Under contention a release hands off in its own round trip: a service whose last release of a
     * name found waiters sends the next one with the hand-off. The waiter is granted and notified as
     * before; a refused release in that form changes nothing.
     */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void aReleaseAfterOneThatFoundWaitersHandsOffInItsOwnRoundTrip(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        List<String> prepared = new CopyOnWriteArrayList<>();
        HikariDataSource pool = db.newPool(2);
        DataSource recording = LeaseFixture.recordingStatements(pool, prepared);
        try (LeaseService a = LeaseFixture.builder(db, recording).table(table).build();
                LeaseService b = LeaseFixture.builder(db, db.newPool(2))
                        .table(table)
                        .tune(t -> t.safetyPoll(Duration.ofMinutes(1)))
                        .build()) {
            for (int round = 0; round < 3; round++) {
                Lease held = a.tryAcquire("job", "a", LONG).orElseThrow();
                CompletableFuture<Lease> waiting = LeaseFixture.lockAsync(b, "job", "b", LONG, Duration.ofSeconds(20));
                LeaseFixture.awaitListenedEntry(db, table);
                prepared.clear();
                a.release(held);
                assertThat(prepared).as("round %d", round).hasSize(round == 0 ? 2 : 1);
                assertThat(prepared.get(round == 0 ? 1 : 0)).contains("pg_notify");
                Lease got = waiting.get(10, TimeUnit.SECONDS);
                assertThat(got).isEqualTo(a.find("job").orElseThrow());
                assertThat(got.token()).isEqualTo(held.token() + 1);
                assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + "_queue"))
                        .isZero();
                b.release(got);

                // A release of a grant that is over, in the same form: refused, and the row stays as it is.
                Lease before = a.find("job").orElseThrow();
                if (round > 0) {
                    prepared.clear();
                    assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> a.release(held)))
                            .isInstanceOf(LeaseNotHeldException.class);
                    assertThat(prepared)
                            .as("the release with its hand-off, then the read that says why")
                            .hasSize(2);
                    assertThat(prepared.get(0)).contains("pg_notify");
                    assertThat(prepared.get(1)).startsWith("SELECT");
                    assertThat(a.find("job")).contains(before);
                }
            }
            assertThat(b.probe().handOffsReceived()).isEqualTo(3);

            // A grant that ran out with a waiter queued behind it: its release, in the same form, is
            // refused as expired and hands nothing to the waiter (the waiter takes a free lease at its
            // own next attempt, here a minute away).
            Lease ran = a.tryAcquire("job", "a", Duration.ofMillis(2000)).orElseThrow();
            CompletableFuture<Lease> waiting = LeaseFixture.lockAsync(b, "job", "b", LONG, Duration.ofSeconds(20));
            LeaseFixture.awaitListenedEntry(db, table);
            await("the grant ran out by the database's clock")
                    .atMost(LeaseFixture.AT_MOST)
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> db.queryLong("SELECT COUNT(*) FROM " + table
                                    + " WHERE name = 'job' AND expires_at > clock_timestamp()")
                            == 0);
            Lease before = a.find("job").orElseThrow();
            prepared.clear();
            Throwable refused = org.assertj.core.api.Assertions.catchThrowable(() -> a.release(ran));
            assertThat(refused).isInstanceOf(LeaseExpiredException.class);
            assertThat(((LeaseNotHeldException) refused).reason()).isEqualTo(LeaseNotHeldException.Reason.EXPIRED);
            assertThat(prepared.get(0)).as("the combined form").contains("pg_notify");
            assertThat(a.find("job")).contains(before);
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + "_queue"))
                    .as("the waiter still queues")
                    .isOne();
            assertThat(waiting).isNotDone();
            // A release that matches hands the lease on as before.
            Lease again = a.tryAcquire("job", "a", LONG).orElseThrow();
            a.release(again);
            assertThat(waiting.get(10, TimeUnit.SECONDS).token()).isEqualTo(again.token() + 1);
            assertThat(b.probe().handOffsReceived()).isEqualTo(4);
        } finally {
            pool.close();
        }
    }

    /** An operator's force-release hands the lease over like a release: the waiter gets the next token at once. */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void aForceReleaseHandsTheLeaseToTheFirstWaiter(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService a = LeaseFixture.service(db, db.newPool(2), table);
                LeaseService b = LeaseFixture.builder(db, db.newPool(2))
                        .table(table)
                        .tune(t -> t.safetyPoll(Duration.ofMinutes(1)))
                        .build()) {
            Lease held = a.tryAcquire("job", "a", LONG).orElseThrow();
            CompletableFuture<Lease> waiting = LeaseFixture.lockAsync(b, "job", "b", LONG, Duration.ofSeconds(20));
            LeaseFixture.awaitListenedEntry(db, table);
            assertThat(a.forceRelease("job", "ops")).isTrue();
            Lease got = waiting.get(10, TimeUnit.SECONDS);
            assertThat(got.token()).isEqualTo(held.token() + 1);
            assertThat(a.find("job").orElseThrow()).isEqualTo(got);
            assertThat(b.probe().handOffsReceived()).isEqualTo(1);
            // The broken holder cannot release it: the lease was granted again since.
            assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> a.release(held)))
                    .isInstanceOf(LeaseExpiredException.class)
                    .hasMessageContaining("granted again");
        }
    }

    /** A waiter whose notification was lost finds the grant handed to it at its next attempt: same token, once. */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void aWaiterThatMissedItsNotificationTakesItsGrantAtItsNextAttempt(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        LeaseStore jdbc = LeaseStores.forDialect(Dialect.POSTGRESQL, table);
        try (Connection c = db.connection();
                Connection listener = LeaseFixture.listener(db)) {
            LeaseRow held = jdbc.acquire(c, "job", "a", 60_000_000, false).orElseThrow();
            LeaseDurabilityTest.queueWaiter(db, table, "job", "waiter-x", "x", LeaseDurabilityTest.pid(listener));
            assertThat(jdbc.release(c, "job", "a", held.token(), true, null)).isTrue();
            Optional<LeaseRow> picked =
                    jdbc.acquireOrQueue(c, "job", "x", "waiter-x", 60_000_000, 2_000_000, true, null);
            assertThat(picked).isPresent();
            assertThat(picked.get().token()).isEqualTo(held.token() + 1);
            assertThat(db.queryString("SELECT handed_to FROM " + table + " WHERE name = 'job'"))
                    .as("picked up")
                    .isNull();
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + "_queue")).isZero();
            // Another call of the same owner is no such waiter: refused, and it queues.
            assertThat(jdbc.acquireOrQueue(c, "job", "x", "waiter-y", 60_000_000, 2_000_000, false, null))
                    .isEmpty();
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + "_queue")).isEqualTo(1);
        }
    }

    /**
     * A hand-off notifies its waiter's listener on that listener's own channel and nobody else: a
     * listener of another service (every instance has one) hears nothing, on its channel or on the
     * table's stem, where every listener heard every grant before.
     */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void aHandOffNotifiesOnlyItsWaitersListener(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        String stem = db.queryString("SELECT " + PgLeaseSql.stemSql(table));
        LeaseStore jdbc = LeaseStores.forDialect(Dialect.POSTGRESQL, table);
        try (Connection c = db.connection();
                Connection mine = LeaseFixture.listener(db);
                Connection other = LeaseFixture.listener(db)) {
            int minePid = LeaseDurabilityTest.pid(mine);
            int otherPid = LeaseDurabilityTest.pid(other);
            listen(mine, PgLeaseSql.listenerChannel(stem, minePid));
            listen(other, PgLeaseSql.listenerChannel(stem, otherPid));
            listen(other, stem);
            LeaseRow held = jdbc.acquire(c, "job", "a", 60_000_000, false).orElseThrow();
            LeaseDurabilityTest.queueWaiter(db, table, "job", "waiter-x", "x", minePid);
            assertThat(jdbc.release(c, "job", "a", held.token(), true, null)).isTrue();
            List<String> heard = notifications(mine, 5_000);
            assertThat(heard).hasSize(1);
            assertThat(heard.get(0)).startsWith(PgWakeUps.key("job", "waiter-x") + " " + (held.token() + 1) + " ");
            assertThat(notifications(other, 500))
                    .as("another service's listener")
                    .isEmpty();
            assertThat(db.queryString("SELECT owner FROM " + table + " WHERE name = 'job'"))
                    .isEqualTo("x");
        }
    }

    /**
     * A first waiter queued without a listener (its service's listener is not up yet) is neither
     * handed the lease nor notified (it has no channel): a release that hands off in a statement of its
     * own, one that sends the hand-off in its round trip, and a force-release each succeed and leave the
     * lease free for the waiter's next attempt. ({@code pg_notify} refuses a null channel, and that
     * error would undo the release with it.)
     */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void aWaiterQueuedWithoutAListenerIsNotHandedTheLeaseAndNothingFails(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        LeaseStore jdbc = LeaseStores.forDialect(Dialect.POSTGRESQL, table);
        try (Connection c = db.connection()) {
            db.execute("INSERT INTO " + table + "_queue (name, owner, wait_until, lease_owner, ttl_micros, listener)"
                    + " VALUES ('job', 'waiter-x', clock_timestamp() + interval '1 minute', 'x', 60000000, NULL)");
            for (String how : List.of("release, then hand-off", "release with its hand-off", "force-release")) {
                LeaseRow held = jdbc.acquire(c, "job", "a", 60_000_000, false).orElseThrow();
                // As a queued attempt does: the lease row says that someone waits.
                db.execute("UPDATE " + table
                        + " SET waiters_until = clock_timestamp() + interval '1 minute' WHERE name = 'job'");
                boolean released = how.equals("force-release")
                        ? jdbc.forceRelease(c, "job", "operator")
                        : jdbc.release(c, "job", "a", held.token(), true, null);
                assertThat(released).as(how).isTrue();
                LeaseRow row = jdbc.read(c, "job").orElseThrow();
                assertThat(row.owner()).as(how).isEqualTo("a");
                assertThat(row.token()).as(how).isEqualTo(held.token());
                assertThat(row.isReleased()).as(how).isTrue();
                assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + "_queue WHERE listener IS NULL"))
                        .as(how)
                        .isEqualTo(1);
            }
        }
    }

    /**
     * Every listener's channel fits PostgreSQL's 63-byte identifiers, whatever the table's name and the
     * pid, for tables that exist (resolved) and that do not (the spelling).
     */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void aListenersChannelFitsAnIdentifier(TestDatabase db) throws Exception {
        String existing = LeaseFixture.install(db);
        String longest = "s".repeat(63) + "." + "t".repeat(63);
        for (String table : List.of(
                existing,
                existing.toUpperCase(java.util.Locale.ROOT),
                "public." + existing,
                "holdfast_leases",
                "t".repeat(30),
                "t".repeat(38),
                "app.leases",
                longest)) {
            String stem = db.queryString("SELECT " + PgLeaseSql.stemSql(table));
            assertThat(stem).as(table).matches("holdfast_lease_[a-z0-9_]{1,37}");
            assertThat(PgLeaseSql.listenerChannel(stem, Integer.MAX_VALUE))
                    .as(table)
                    .hasSizeLessThanOrEqualTo(63);
        }
        assertThat(db.queryString("SELECT " + PgLeaseSql.stemSql("a".repeat(60))))
                .isNotEqualTo(db.queryString("SELECT " + PgLeaseSql.stemSql("a".repeat(59) + "b")));
    }

    private static void listen(Connection c, String channel) throws java.sql.SQLException {
        try (var s = c.createStatement()) {
            s.execute("LISTEN " + channel);
        }
    }

    /** The payloads {@code c} has received, waiting at most {@code millis} for the first. */
    private static List<String> notifications(Connection c, int millis) throws java.sql.SQLException {
        org.postgresql.PGNotification[] got =
                c.unwrap(org.postgresql.PGConnection.class).getNotifications(millis);
        return got == null
                ? List.of()
                : java.util.Arrays.stream(got)
                        .map(org.postgresql.PGNotification::getParameter)
                        .toList();
    }

    /**
     * A waiter that gives up (bound, interrupt) just as it is handed the lease gives it back, and the
     * lease goes on to the next waiter: it is never left held by nobody until its TTL.
     */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void aWaiterThatGaveUpGivesBackAGrantHandedToIt(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        LeaseStore jdbc = LeaseStores.forDialect(Dialect.POSTGRESQL, table);
        try (LeaseService b = LeaseFixture.service(db, db.newPool(2), table);
                Connection c = db.connection();
                Connection listener = LeaseFixture.listener(db)) {
            LeaseRow held = jdbc.acquire(c, "job", "a", 60_000_000, false).orElseThrow();
            LeaseDurabilityTest.queueWaiter(db, table, "job", "waiter-x", "x", LeaseDurabilityTest.pid(listener));
            CompletableFuture<Lease> waiting = LeaseFixture.lockAsync(b, "job", "b", LONG, Duration.ofSeconds(20));
            LeaseFixture.awaitQueued(db, table, 2);
            assertThat(jdbc.release(c, "job", "a", held.token(), false, null)).isTrue();
            assertThat(db.queryString("SELECT owner FROM " + table + " WHERE name = 'job'"))
                    .as("handed to x")
                    .isEqualTo("x");
            assertThat(waiting).isNotDone();
            jdbc.giveUp(c, "job", "waiter-x", false);
            Lease got = waiting.get(10, TimeUnit.SECONDS);
            assertThat(got.owner()).isEqualTo("b");
            assertThat(got.token()).isEqualTo(held.token() + 2);
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + "_queue")).isZero();
            // Giving up again, or without a grant, changes nothing.
            String before = LeaseFixture.dump(db, table);
            jdbc.giveUp(c, "job", "waiter-x", false);
            assertThat(LeaseFixture.dump(db, table)).isEqualTo(before);
        }
    }

    /**
     * No hand-off to a waiter whose listener connection is gone (its process crashed): the lease is
     * left free, so it is not held by a dead waiter until its TTL; the entry lapses as before.
     */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void noHandOffToAWaiterWhoseListenerIsGone(TestDatabase db) throws Exception {
        int gone;
        // Unpooled: closing it ends its backend.
        try (Connection listener = LeaseFixture.listener(db)) {
            gone = LeaseDurabilityTest.pid(listener);
        }
        await("the closed connection's backend ended")
                .atMost(LeaseFixture.AT_MOST)
                .pollInterval(Duration.ofMillis(10))
                .until(() -> db.queryLong("SELECT COUNT(*) FROM pg_stat_activity WHERE pid = ?", gone) == 0);
        assertTheReleaseLeavesTheLeaseFree(db, gone);
    }

    /**
     * Nor to a waiter whose listener is a live backend that does not listen (a listener that stopped and
     * went back to its pool, or a backend that took over a dead listener's pid): only a listening
     * connection holds the listener's lock.
     */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void noHandOffToAWaiterWhoseListenerIsABackendThatDoesNotListen(TestDatabase db) throws Exception {
        try (Connection alive = LeaseFixture.unpooled(db)) {
            assertTheReleaseLeavesTheLeaseFree(db, LeaseDurabilityTest.pid(alive));
        }
    }

    private static void assertTheReleaseLeavesTheLeaseFree(TestDatabase db, int listener) throws Exception {
        String table = LeaseFixture.install(db);
        LeaseStore jdbc = LeaseStores.forDialect(Dialect.POSTGRESQL, table);
        try (Connection c = db.connection()) {
            LeaseRow held = jdbc.acquire(c, "job", "a", 60_000_000, false).orElseThrow();
            LeaseDurabilityTest.queueWaiter(db, table, "job", "waiter-x", "x", listener);
            assertThat(jdbc.release(c, "job", "a", held.token(), false, null)).isTrue();
            LeaseRow row = jdbc.read(c, "job").orElseThrow();
            assertThat(row.owner()).isEqualTo("a");
            assertThat(row.isReleased()).isTrue();
            assertThat(row.token()).isEqualTo(held.token());
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + "_queue")).isEqualTo(1);
        }
    }

    /**
     * A service's listener holds its lock exactly while it listens: its waiter is handed the lease,
     * and once the service is closed its connection, back in the pool and alive, holds no lock.
     */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void theListenerHoldsItsLockWhileItListensAndGivesItBackToThePool(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        HikariDataSource pool = db.newPool(2);
        int listener;
        try (LeaseService a = LeaseFixture.service(db, db.newPool(2), table);
                LeaseService b = LeaseFixture.builder(db, pool)
                        .table(table)
                        .tune(t -> t.safetyPoll(Duration.ofMinutes(1)))
                        .build()) {
            Lease held = a.tryAcquire("job", "a", LONG).orElseThrow();
            CompletableFuture<Lease> waiting = LeaseFixture.lockAsync(b, "job", "b", LONG, Duration.ofSeconds(20));
            LeaseFixture.awaitListenedEntry(db, table);
            listener = (int) db.queryLong("SELECT listener FROM " + table + "_queue");
            assertThat(listenerLocks(db, listener)).as("held while it listens").isEqualTo(1);
            a.release(held);
            Lease got = waiting.get(10, TimeUnit.SECONDS);
            assertThat(got.owner()).isEqualTo("b");
            assertThat(b.probe().handOffsReceived()).isEqualTo(1);
            b.release(got);
        }
        await("the closed listener gave its lock back")
                .atMost(LeaseFixture.AT_MOST)
                .pollInterval(Duration.ofMillis(10))
                .until(() -> listenerLocks(db, listener) == 0);
        assertThat(db.queryLong("SELECT COUNT(*) FROM pg_stat_activity WHERE pid = ?", listener))
                .as("its connection is still open, in the pool")
                .isEqualTo(1);
        assertThat(pool.getHikariPoolMXBean().getTotalConnections()).isPositive();
    }

    /**
     * A listener whose pid a running transaction checked (when the pid was a dead listener's, so that
     * the check holds the lock in shared mode to its end) does not listen before that transaction
     * ends, and then does: its waiters are served by polling meanwhile, and by hand-off after.
     */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void aListenerStartsOnceATransactionThatCheckedItsPidEnds(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        HikariDataSource pool = LeaseFixture.listenerPool(db, 2);
        List<Integer> pids = pidsOfBoth(pool);
        try (LeaseService a = LeaseFixture.service(db, db.newPool(2), table);
                LeaseService b = LeaseFixture.withListenerPool(db, pool)
                        .table(table)
                        .tune(t -> t.safetyPoll(Duration.ofMinutes(1)))
                        .build();
                Connection checker = LeaseFixture.unpooled(db)) {
            checkAsDeadListeners(checker, pids);
            Lease held = a.tryAcquire("job", "a", LONG).orElseThrow();
            CompletableFuture<Lease> waiting = LeaseFixture.lockAsync(b, "job", "b", LONG, Duration.ofSeconds(20));
            LeaseFixture.awaitQueued(db, table, 1);
            assertThat(db.queryLong("SELECT COUNT(listener) FROM " + table + "_queue"))
                    .as("queued, not listened for")
                    .isZero();
            for (int pid : pids) {
                assertThat(listenerLocks(db, pid)).isZero();
            }
            checker.commit();
            LeaseFixture.awaitListenedEntry(db, table);
            int listener = (int) db.queryLong("SELECT listener FROM " + table + "_queue");
            assertThat(pids).contains(listener);
            assertThat(listenerLocks(db, listener)).isEqualTo(1);
            a.release(held);
            Lease got = waiting.get(10, TimeUnit.SECONDS);
            assertThat(got.token()).isEqualTo(held.token() + 1);
            assertThat(b.probe().handOffsReceived()).isEqualTo(1);
            b.release(got);
        }
    }

    /** Nor does a listener kept from listening so keep its service from closing, or its connection. */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void aListenerThatWaitsForItsLockEndsWithItsService(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        HikariDataSource pool = LeaseFixture.listenerPool(db, 2);
        List<Integer> pids = pidsOfBoth(pool);
        try (Connection checker = LeaseFixture.unpooled(db)) {
            checkAsDeadListeners(checker, pids);
            try (LeaseService a = LeaseFixture.service(db, db.newPool(2), table);
                    LeaseService b =
                            LeaseFixture.withListenerPool(db, pool).table(table).build()) {
                Lease held = a.tryAcquire("job", "a", LONG).orElseThrow();
                CompletableFuture<Lease> waiting = LeaseFixture.lockAsync(b, "job", "b", LONG, Duration.ofMillis(300));
                assertThat(waiting)
                        .failsWithin(Duration.ofSeconds(10))
                        .withThrowableThat()
                        .withCauseInstanceOf(LeaseTimeoutException.class);
                await("the listener holds a connection, still trying")
                        .atMost(LeaseFixture.AT_MOST)
                        .pollInterval(Duration.ofMillis(10))
                        .until(() -> pool.getHikariPoolMXBean().getActiveConnections() == 1);
                for (int pid : pids) {
                    assertThat(listenerLocks(db, pid)).as("not listening").isZero();
                }
                a.release(held);
            }
            await("the listener gave its connection back")
                    .atMost(LeaseFixture.AT_MOST)
                    .pollInterval(Duration.ofMillis(10))
                    .until(() -> pool.getHikariPoolMXBean().getActiveConnections() == 0);
            for (int pid : pids) {
                assertThat(listenerLocks(db, pid)).isZero();
            }
            checker.rollback();
        }
    }

    /** The backend pids of both connections of {@code pool}. */
    private static List<Integer> pidsOfBoth(HikariDataSource pool) throws java.sql.SQLException {
        try (Connection first = pool.getConnection();
                Connection second = pool.getConnection()) {
            return List.of(LeaseDurabilityTest.pid(first), LeaseDurabilityTest.pid(second));
        }
    }

    /** In {@code checker}'s open transaction, the hand-off's check of each pid, as if each were a dead listener's. */
    private static void checkAsDeadListeners(Connection checker, List<Integer> pids) throws java.sql.SQLException {
        checker.setAutoCommit(false);
        for (int pid : pids) {
            try (var ps = checker.prepareStatement("SELECT " + PgLeaseSql.listenerAlive("?"))) {
                ps.setInt(1, pid);
                try (var rs = ps.executeQuery()) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getBoolean(1))
                            .as("pid %d is no listener's", pid)
                            .isFalse();
                }
            }
        }
    }

    /** Granted advisory locks of the listener kind held by backend {@code pid}. */
    private static long listenerLocks(TestDatabase db, int pid) throws java.sql.SQLException {
        return db.queryLong(
                "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
                        + " AND classid::bigint = ? AND objid::bigint = ? AND objsubid = 2 AND pid = ?",
                (long) PgLeaseSql.LISTENER_LOCK_KEY,
                (long) pid,
                pid);
    }
}
