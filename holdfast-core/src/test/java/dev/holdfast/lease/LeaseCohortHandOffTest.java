package dev.holdfast.lease;

import dev.holdfast.DatabaseException;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.lease.internal.CohortHandOffs;
import dev.holdfast.lease.internal.LeaseStore;
import dev.holdfast.lease.internal.LeaseStores;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Cohort hand-off ({@link LeaseService.Builder#cohortHandOffs}): a release passes the lease to a
 * waiting call of the same service and owner in memory, with a token from a block reserved in the
 * database, at most the bound times in a row; then the lease goes to the database's queue.
 */
class LeaseCohortHandOffTest {

    private static final Duration LONG = Duration.ofSeconds(30);
    private static final Duration WAIT = Duration.ofSeconds(20);

    /** Waits, polling every 5 ms, until {@code condition} holds (a state in memory: cheap to ask). */
    private static void awaitThat(String what, Callable<Boolean> condition) {
        await(what)
                .atMost(LeaseFixture.AT_MOST)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(5))
                .until(condition);
    }

    /** A lock call of "srv" for "job", returned once {@code waiters} calls wait in the service's memory. */
    private static CompletableFuture<Lease> waitingLocally(LeaseService leases, int waiters)
            throws InterruptedException {
        CompletableFuture<Lease> call = LeaseFixture.lockAsync(leases, "job", "srv", LONG, WAIT);
        awaitThat(waiters + " calls waiting in memory", () -> leases.probe().cohortWaiters("job", "srv") == waiters);
        return call;
    }

    private static LeaseService cohort(javax.sql.DataSource ds, String table, int max) {
        return LeaseService.builder(ds).table(table).cohortHandOffs(max).build();
    }

    /**
     * The first hand-off of a grant reserves the block of tokens (one statement, two on MariaDB);
     * the next is passed in memory without any.
     */
    @DatabaseTest
    void aReleasePassesTheLeaseToAWaitingCallOfTheSameOwnerWithoutAStatement(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        List<String> prepared = new CopyOnWriteArrayList<>();
        try (LeaseService leases = cohort(LeaseFixture.recordingStatements(db.newPool(4), prepared), table, 8);
                LeaseService other = LeaseFixture.service(db.newPool(2), table)) {
            Lease held = leases.tryAcquire("job", "srv", LONG).orElseThrow();
            CompletableFuture<Lease> first = waitingLocally(leases, 1);
            CompletableFuture<Lease> second = waitingLocally(leases, 2);
            assertThat(LeaseFixture.rows(db, table + "_queue"))
                    .as("not in the database's queue")
                    .isZero();
            assertThat(leases.find("job").orElseThrow())
                    .as("waiting changed nothing")
                    .isEqualTo(held);

            prepared.clear();
            leases.release(held);
            Lease got = first.get(5, TimeUnit.SECONDS);
            assertThat(prepared).as("the reservation").hasSize(db.kind() == TestDatabase.Kind.MARIADB ? 2 : 1);
            assertThat(prepared.get(0)).contains("token = token + ?");
            assertThat(got.owner()).isEqualTo("srv");
            assertThat(got.token()).isEqualTo(held.token() + 1);
            Lease row = leases.find("job").orElseThrow();
            assertThat(row.token()).as("the top of the block").isEqualTo(held.token() + 8);
            assertThat(got.expiresAt()).isEqualTo(row.expiresAt()).isEqualTo(held.expiresAt());
            assertThat(got.acquiredAt())
                    .as("the database grant's")
                    .isEqualTo(held.acquiredAt())
                    .isEqualTo(row.acquiredAt());
            assertThat(other.tryAcquire("job", "elsewhere", LONG))
                    .as("still held in the database")
                    .isEmpty();

            prepared.clear();
            leases.release(got);
            Lease next = second.get(5, TimeUnit.SECONDS);
            assertThat(prepared).as("statements of a hand-off from the block").isEmpty();
            assertThat(next.token()).isEqualTo(held.token() + 2);
            assertThat(leases.probe().cohortHandOffs()).isEqualTo(2);
            assertThat(leases.batchingStats())
                    .as("batching off (the default): only the cohort's hand-offs")
                    .isEqualTo(new BatchingStats(0, 0, 0, 0, 2));

            // Its holder renews and releases it through the service, which maps it to the grant.
            Lease renewed = leases.renew(next, Duration.ofSeconds(40));
            assertThat(renewed.token()).isEqualTo(next.token());
            assertThat(renewed.expiresAt())
                    .isEqualTo(leases.find("job").orElseThrow().expiresAt())
                    .isAfter(next.expiresAt());
            leases.release(renewed);
            assertThat(leases.find("job").orElseThrow().isReleased()).isTrue();
            // The next grant, from the database, starts above the whole block.
            assertThat(other.tryAcquire("job", "elsewhere", LONG).orElseThrow().token())
                    .isEqualTo(held.token() + 9);
        }
    }

    /**
     * A chain of holders, local and remote, each writes through the fence with its token: every write
     * is accepted in turn, and afterwards a write with any earlier holder's token is refused.
     */
    @DatabaseTest
    void everyHolderLocalOrRemoteFencesOutEveryEarlierOne(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        String resource = db.newTableName("fenced");
        db.execute("CREATE TABLE " + resource + " (id INT PRIMARY KEY, val VARCHAR(50), fence BIGINT)");
        db.execute("INSERT INTO " + resource + " (id) VALUES (1)");
        FencedUpdate fence = FencedUpdate.of(resource, "id", "fence", "val");
        List<Lease> holders = new ArrayList<>();
        try (LeaseService leases = cohort(db.newPool(4), table, 3);
                LeaseService remote = LeaseFixture.service(db.newPool(3), table);
                Connection c = db.connection()) {
            Lease first = leases.acquire("job", "srv", LONG, WAIT);
            holders.add(first);
            assertThat(fence.update(c, first.token(), 1, "first")).isTrue();
            CompletableFuture<Lease> remoteWaits = LeaseFixture.lockAsync(remote, "job", "remote", LONG, WAIT);
            LeaseFixture.awaitQueued(db, table, 1);
            Lease current = first;
            for (int i = 0; i < 3; i++) {
                CompletableFuture<Lease> next = LeaseFixture.lockAsync(leases, "job", "srv", LONG, WAIT);
                Lease waitingFor = current;
                awaitThat("a local waiter", () -> leases.probe().cohortWaiters("job", "srv") == 1);
                leases.release(waitingFor);
                current = next.get(5, TimeUnit.SECONDS);
                holders.add(current);
                assertThat(fence.update(c, current.token(), 1, "local-" + i)).isTrue();
            }
            assertThat(leases.probe().cohortHandOffs()).isEqualTo(3);
            leases.release(current); // the bound is spent: to the database, where the remote waiter is first
            Lease fromDatabase = remoteWaits.get(10, TimeUnit.SECONDS);
            holders.add(fromDatabase);
            assertThat(fence.update(c, fromDatabase.token(), 1, "remote")).isTrue();
            remote.release(fromDatabase);
        }
        for (int i = 1; i < holders.size(); i++) {
            assertThat(holders.get(i).token()).isGreaterThan(holders.get(i - 1).token());
        }
        try (Connection c = db.connection()) {
            for (Lease earlier : holders.subList(0, holders.size() - 1)) {
                assertThat(fence.update(c, earlier.token(), 1, "stale"))
                        .as("token %d", earlier.token())
                        .isFalse();
            }
        }
        assertThat(db.queryString("SELECT val FROM " + resource + " WHERE id = 1"))
                .isEqualTo("remote");
    }

    /**
     * With the bound at 2, a remote waiter queued in the database gets the lease after two local
     * hand-offs. The cohort's other callers keep their place in memory; one of them (its
     * representative) queues in the database behind the remote waiter, and once it has the next
     * grant, passes it on to the last one in memory again.
     */
    @DatabaseTest
    void aRemoteWaiterIsServedWithinTheBound(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = cohort(db.newPool(8), table, 2);
                LeaseService remote = LeaseFixture.service(db.newPool(3), table)) {
            Lease held = leases.tryAcquire("job", "srv", LONG).orElseThrow();
            CompletableFuture<Lease> remoteWaits = LeaseFixture.lockAsync(remote, "job", "remote", LONG, WAIT);
            LeaseFixture.awaitQueued(db, table, 1);
            List<CompletableFuture<Lease>> local = new ArrayList<>();
            for (int i = 1; i <= 4; i++) {
                local.add(LeaseFixture.lockAsync(leases, "job", "srv", LONG, WAIT));
                int waiting = i;
                awaitThat("local waiter " + i, () -> leases.probe().cohortWaiters("job", "srv") == waiting);
            }
            assertThat(LeaseFixture.rows(db, table + "_queue"))
                    .as("only the remote waiter is in the database")
                    .isEqualTo(1);

            leases.release(held);
            Lease one = local.get(0).get(5, TimeUnit.SECONDS);
            leases.release(one);
            Lease two = local.get(1).get(5, TimeUnit.SECONDS);
            leases.release(two); // the bound is spent: to the database, where the remote waiter is first
            Lease r = remoteWaits.get(10, TimeUnit.SECONDS);
            assertThat(r.owner()).isEqualTo("remote");
            LeaseFixture.awaitQueued(db, table, 1); // the cohort's representative, behind it
            assertThat(leases.probe().cohortWaiters("job", "srv")).isEqualTo(1);
            assertThat(local.get(2)).isNotDone();
            remote.release(r);
            Lease three = local.get(2).get(10, TimeUnit.SECONDS);
            assertThat(three.token()).isGreaterThan(r.token());
            leases.release(three);
            Lease four = local.get(3).get(5, TimeUnit.SECONDS);
            assertThat(four.token()).isEqualTo(three.token() + 1);
            assertThat(leases.probe().cohortHandOffs()).isEqualTo(3);
            leases.release(four);
            assertThat(leases.probe().cohortGrants())
                    .as("nothing kept once all is released")
                    .isZero();
        }
    }

    /**
     * A waiter that asks for a longer ttl than half of what the grant has left gets the grant renewed
     * first (one statement), never shortened; one whose ttl fits gets it as it stands.
     */
    @DatabaseTest
    void aHandOffRenewsTheGrantFirstWhenTooLittleIsLeftForTheWaitersTtl(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        List<String> prepared = new CopyOnWriteArrayList<>();
        try (LeaseService leases = cohort(LeaseFixture.recordingStatements(db.newPool(4), prepared), table, 8)) {
            Lease held = leases.tryAcquire("job", "srv", LONG).orElseThrow();
            CompletableFuture<Lease> same = waitingLocally(leases, 1);
            CompletableFuture<Lease> longer =
                    LeaseFixture.lockAsync(leases, "job", "srv", Duration.ofMinutes(10), WAIT);
            awaitThat("the second local waiter", () -> leases.probe().cohortWaiters("job", "srv") == 2);

            prepared.clear();
            leases.release(held);
            Lease first = same.get(5, TimeUnit.SECONDS);
            assertThat(prepared).as("the reservation only").hasSize(db.kind() == TestDatabase.Kind.MARIADB ? 2 : 1);
            assertThat(first.expiresAt()).as("not extended").isEqualTo(held.expiresAt());
            prepared.clear();
            leases.release(first);
            Lease second = longer.get(5, TimeUnit.SECONDS);
            assertThat(prepared)
                    .as("the renewal before the hand-off")
                    .hasSize(db.kind() == TestDatabase.Kind.MARIADB ? 2 : 1);
            assertThat(second.expiresAt())
                    .isAfter(first.expiresAt().plus(Duration.ofMinutes(9)))
                    .isEqualTo(leases.find("job").orElseThrow().expiresAt());
            assertThat(second.token()).isEqualTo(first.token() + 1);
            leases.release(second);
        }
    }

    @DatabaseTest
    void callsOfAnotherOwnerGoThroughTheDatabase(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = cohort(db.newPool(4), table, 8)) {
            Lease held = leases.tryAcquire("job", "srv", LONG).orElseThrow();
            CompletableFuture<Lease> waiting = LeaseFixture.lockAsync(leases, "job", "other", LONG, WAIT);
            LeaseFixture.awaitQueued(db, table, 1);
            assertThat(leases.probe().cohortWaiters("job", "srv")).isZero();
            leases.release(held);
            Lease got = waiting.get(10, TimeUnit.SECONDS);
            assertThat(got.owner()).isEqualTo("other");
            assertThat(leases.find("job").orElseThrow().owner()).isEqualTo("other");
            assertThat(leases.probe().cohortHandOffs()).isZero();
            leases.release(got);
        }
    }

    @DatabaseTest
    void aSecondReleaseOfAPassedOnLeaseIsRefusedAndChangesNothing(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = cohort(db.newPool(4), table, 8)) {
            Lease held = leases.tryAcquire("job", "srv", LONG).orElseThrow();
            CompletableFuture<Lease> waiting = waitingLocally(leases, 1);
            leases.release(held);
            Lease got = waiting.get(5, TimeUnit.SECONDS);
            String before = LeaseFixture.dump(db, table);
            assertThatThrownBy(() -> leases.release(held)).isInstanceOfSatisfying(LeaseNotHeldException.class, e -> {
                assertThat(e.reason()).isEqualTo(LeaseNotHeldException.Reason.RELEASED);
                assertThat(e.current().orElseThrow().token()).isEqualTo(got.token());
            });
            assertThatThrownBy(() -> leases.renew(held, LONG)).isInstanceOf(LeaseNotHeldException.class);
            assertThat(LeaseFixture.dump(db, table)).isEqualTo(before);
            leases.release(got);
        }
    }

    @DatabaseTest
    void aLocalWaiterThatTimesOutLeavesNothingBehind(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = cohort(db.newPool(4), table, 8)) {
            Lease held = leases.tryAcquire("job", "srv", LONG).orElseThrow();
            assertThatThrownBy(() -> leases.acquire("job", "srv", LONG, Duration.ofMillis(300)))
                    .isInstanceOf(LeaseTimeoutException.class);
            assertThat(leases.probe().cohortWaiters("job", "srv")).isZero();
            LeaseFixture.awaitQueued(db, table, 0);
            leases.release(held);
            assertThat(leases.probe().cohortHandOffs()).isZero();
            assertThat(leases.find("job").orElseThrow().isReleased()).isTrue();
        }
    }

    @DatabaseTest
    void anInterruptedLocalWaiterHoldsNothing(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = cohort(db.newPool(4), table, 8)) {
            Lease held = leases.tryAcquire("job", "srv", LONG).orElseThrow();
            CompletableFuture<Throwable> failure = new CompletableFuture<>();
            Thread t = new Thread(() -> {
                try {
                    leases.acquire("job", "srv", LONG, WAIT);
                    failure.complete(null);
                } catch (Throwable e) {
                    failure.complete(e);
                }
            });
            t.start();
            awaitThat("the local waiter", () -> leases.probe().cohortWaiters("job", "srv") == 1);
            t.interrupt();
            assertThat(failure.get(5, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
            assertThat(leases.probe().cohortWaiters("job", "srv")).isZero();
            leases.release(held);
            assertThat(leases.probe().cohortHandOffs()).isZero();
            assertThat(leases.find("job").orElseThrow().isReleased()).isTrue();
        }
    }

    /**
     * An operator breaks the lease elsewhere after the block was reserved: this service learns it
     * only at its next statement, so its holder's release still passes the lease on in memory; the
     * remote grant made meanwhile has a greater token than that local holder, whose fenced writes it
     * refuses, and the local holder's release is refused. Without a block yet, the hand-off's
     * reservation finds the grant gone: the release is refused and the waiter goes to the database.
     */
    @DatabaseTest
    void aForceReleaseElsewhereFencesOutLaterLocalHolders(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        String resource = db.newTableName("fenced");
        db.execute("CREATE TABLE " + resource + " (id INT PRIMARY KEY, val VARCHAR(50), fence BIGINT)");
        db.execute("INSERT INTO " + resource + " (id) VALUES (1)");
        FencedUpdate fence = FencedUpdate.of(resource, "id", "fence", "val");
        try (LeaseService leases = cohort(db.newPool(6), table, 8);
                LeaseService operator = LeaseFixture.service(db.newPool(3), table);
                Connection c = db.connection()) {
            Lease held = leases.tryAcquire("job", "srv", LONG).orElseThrow();
            CompletableFuture<Lease> first = waitingLocally(leases, 1);
            leases.release(held);
            Lease one = first.get(5, TimeUnit.SECONDS); // the block is reserved
            CompletableFuture<Lease> second = waitingLocally(leases, 1);

            assertThat(operator.forceRelease("job", "ops")).isTrue();
            Lease taken = operator.tryAcquire("job", "remote", LONG).orElseThrow();
            assertThat(fence.update(c, taken.token(), 1, "remote")).isTrue();
            leases.release(one);
            Lease two = second.get(5, TimeUnit.SECONDS);
            assertThat(two.token()).isLessThan(taken.token());
            assertThat(fence.update(c, two.token(), 1, "stale")).isFalse();
            assertThatThrownBy(() -> leases.release(two)).isInstanceOf(LeaseNotHeldException.class);
            assertThat(operator.find("job").orElseThrow().owner()).isEqualTo("remote");

            // A new grant, with a waiter but no block yet, broken elsewhere: the hand-off finds out.
            operator.release(taken);
            Lease again = leases.tryAcquire("job", "srv", LONG).orElseThrow();
            CompletableFuture<Lease> third = waitingLocally(leases, 1);
            assertThat(operator.forceRelease("job", "ops")).isTrue();
            Lease remoteAgain = operator.tryAcquire("job", "remote", LONG).orElseThrow();
            assertThatThrownBy(() -> leases.release(again)).isInstanceOf(LeaseNotHeldException.class);
            LeaseFixture.awaitQueued(db, table, 1); // the waiter went to the database
            assertThat(third).isNotDone();
            operator.release(remoteAgain);
            Lease three = third.get(10, TimeUnit.SECONDS);
            assertThat(three.token()).isGreaterThan(remoteAgain.token());
            assertThat(leases.probe().cohortHandOffs()).isEqualTo(2);
            leases.release(three);
        }
    }

    /**
     * A holder that never releases: once the grant runs out (by the safe-side estimate, checked every
     * 0.5 s), the cohort's first waiter goes to the database and takes it over, long before its bound.
     */
    @DatabaseTest
    void aGrantThatRunsOutUnreleasedSendsTheFirstWaiterToTheDatabase(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = cohort(db.newPool(4), table, 8)) {
            Lease forgotten =
                    leases.tryAcquire("job", "srv", Duration.ofMillis(300)).orElseThrow();
            CompletableFuture<Lease> waiting =
                    LeaseFixture.lockAsync(leases, "job", "srv", LONG, Duration.ofSeconds(60));
            awaitThat("the local waiter", () -> leases.probe().cohortWaiters("job", "srv") == 1);
            Lease got = waiting.get(20, TimeUnit.SECONDS);
            assertThat(got.token()).as("a new grant from the database").isEqualTo(forgotten.token() + 1);
            assertThat(got.acquiredAt()).isAfterOrEqualTo(forgotten.expiresAt());
            assertThat(leases.probe().cohortHandOffs()).isZero();
            assertThatThrownBy(() -> leases.release(forgotten)).isInstanceOf(LeaseExpiredException.class);
            leases.release(got);
        }
    }

    /**
     * A reservation that commits and then fails (the connection lost before its result came back)
     * fails the release; the first waiter goes to the database, and a retried release finds the
     * grant under the reserved token (the row still has the grant's owner and acquiredAt).
     */
    @DatabaseTest
    void aReservationThatFailsAfterItsCommitLeavesTheGrantReleasable(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        AtomicBoolean failAfterCommit = new AtomicBoolean();
        javax.sql.DataSource ds = LeaseFixture.hooked(db.newPool(4), (sql, statement) -> {
            Object result = statement.call();
            if (sql.contains("token = token + ?") && failAfterCommit.getAndSet(false)) {
                throw new SQLException("connection lost after the commit", "08006");
            }
            return result;
        });
        try (LeaseService leases = cohort(ds, table, 8);
                LeaseService other = LeaseFixture.service(db.newPool(2), table)) {
            Lease held = leases.tryAcquire("job", "srv", LONG).orElseThrow();
            CompletableFuture<Lease> waiting = waitingLocally(leases, 1);
            failAfterCommit.set(true);
            assertThatThrownBy(() -> leases.release(held)).isInstanceOf(DatabaseException.class);
            assertThat(leases.find("job").orElseThrow().token())
                    .as("the reservation committed")
                    .isEqualTo(held.token() + 8);
            LeaseFixture.awaitQueued(db, table, 1); // the waiter went to the database
            assertThat(waiting).isNotDone();
            assertThat(other.tryAcquire("job", "elsewhere", LONG))
                    .as("still held")
                    .isEmpty();

            leases.release(held);
            Lease next = waiting.get(10, TimeUnit.SECONDS);
            assertThat(next.token()).as("above the block").isEqualTo(held.token() + 9);
            assertThat(leases.probe().cohortHandOffs()).isZero();
            leases.release(next);
        }
    }

    /**
     * A local holder whose release fails in the database (unreachable) can retry it: the grant stays
     * mapped until the database has released it.
     */
    @DatabaseTest
    void aLocalHolderCanRetryAReleaseTheDatabaseFailed(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        AtomicBoolean down = new AtomicBoolean();
        javax.sql.DataSource ds = LeaseFixture.hooked(db.newPool(4), (sql, statement) -> {
            if (down.get()) {
                throw new SQLException("connection refused", "08001");
            }
            return statement.call();
        });
        try (LeaseService leases = cohort(ds, table, 8);
                LeaseService other = LeaseFixture.service(db.newPool(2), table)) {
            Lease held = leases.tryAcquire("job", "srv", LONG).orElseThrow();
            CompletableFuture<Lease> waiting = waitingLocally(leases, 1);
            leases.release(held);
            Lease local = waiting.get(5, TimeUnit.SECONDS);
            assertThat(local.token()).isEqualTo(held.token() + 1);

            down.set(true);
            assertThatThrownBy(() -> leases.release(local)).isInstanceOf(DatabaseException.class);
            down.set(false);
            assertThat(other.tryAcquire("job", "elsewhere", LONG))
                    .as("still held")
                    .isEmpty();
            leases.release(local);
            Lease after = other.tryAcquire("job", "elsewhere", LONG).orElseThrow();
            assertThat(after.token()).isEqualTo(held.token() + 9);
            assertThatThrownBy(() -> leases.release(local)).isInstanceOf(LeaseNotHeldException.class);
        }
    }

    /**
     * A waiter gives up at its deadline even while the hand-off's reservation is stalled (the
     * statement runs with the cohort unlocked); the release then finds nobody waiting and releases
     * the grant to the database.
     */
    @DatabaseTest
    void aWaiterGivesUpAtItsDeadlineWhileAReservationStalls(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        CountDownLatch stalled = new CountDownLatch(1);
        CountDownLatch resume = new CountDownLatch(1);
        javax.sql.DataSource ds = LeaseFixture.hooked(db.newPool(4), (sql, statement) -> {
            if (sql.contains("token = token + ?")) {
                stalled.countDown();
                resume.await();
            }
            return statement.call();
        });
        try (LeaseService leases = cohort(ds, table, 8);
                LeaseService other = LeaseFixture.service(db.newPool(2), table)) {
            Lease held = leases.tryAcquire("job", "srv", LONG).orElseThrow();
            CompletableFuture<Lease> waiting =
                    LeaseFixture.lockAsync(leases, "job", "srv", LONG, Duration.ofSeconds(2));
            awaitThat("the local waiter", () -> leases.probe().cohortWaiters("job", "srv") == 1);
            CompletableFuture<Void> release = CompletableFuture.runAsync(() -> leases.release(held));
            try {
                assertThat(stalled.await(10, TimeUnit.SECONDS))
                        .as("the reservation runs")
                        .isTrue();
                assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS))
                        .as("timed out while the reservation still stalls")
                        .hasCauseInstanceOf(LeaseTimeoutException.class);
                assertThat(release).isNotDone();
            } finally {
                resume.countDown();
            }
            release.get(10, TimeUnit.SECONDS);
            assertThat(leases.probe().cohortHandOffs()).isZero();
            Lease after = other.tryAcquire("job", "elsewhere", LONG).orElseThrow();
            assertThat(after.token()).as("above the reserved block").isEqualTo(held.token() + 9);
        }
    }

    /**
     * A reservation of a grant that ran out is refused even when a later grant of the same owner has
     * the very token the reservation would have reached (MariaDB reads the row after its update).
     */
    @DatabaseTest
    void aReservationOfAGrantThatRanOutIsRefusedAndChangesNothing(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        LeaseStore jdbc = LeaseStores.forDialect(Dialect.valueOf(db.kind().name()), table);
        try (LeaseService leases = LeaseFixture.service(db.newPool(2), table);
                Connection c = db.connection()) {
            Lease ranOut =
                    leases.tryAcquire("job", "srv", Duration.ofMillis(20)).orElseThrow();
            Lease[] later = new Lease[1];
            awaitThat(
                    "a later grant",
                    () -> (later[0] = leases.tryAcquire("job", "srv", LONG).orElse(null)) != null);
            assertThat(later[0].token()).isEqualTo(ranOut.token() + 1);
            assertThat(jdbc.reserve(c, "job", "srv", ranOut.token(), 1, 0)).isEmpty();
            assertThat(jdbc.reserve(c, "job", "srv", ranOut.token(), 0, LONG.toNanos() / 1000))
                    .isEmpty();
            assertThat(leases.find("job").orElseThrow()).as("unchanged").isEqualTo(later[0]);
            leases.release(later[0]);
        }
    }

    /**
     * A re-entrant tryLock of the owner renews the row (it may shorten the grant): the service no
     * longer knows the grant's expiry, so the next release goes to the database, not to the waiter.
     */
    @DatabaseTest
    void aReentrantTryLockOfTheOwnerEndsCohortHandOffsOfTheGrant(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = cohort(db.newPool(4), table, 8)) {
            Lease held = leases.tryAcquire("job", "srv", LONG).orElseThrow();
            CompletableFuture<Lease> waiting = waitingLocally(leases, 1);
            assertThat(leases.tryLock("job", "srv", Duration.ofSeconds(5))).isTrue();
            assertThat(leases.find("job").orElseThrow().expiresAt())
                    .as("shortened")
                    .isBefore(held.expiresAt());
            LeaseFixture.awaitQueued(db, table, 1); // the waiter went to the database
            leases.release(held);
            Lease next = waiting.get(10, TimeUnit.SECONDS);
            assertThat(next.token()).as("a new database grant").isEqualTo(held.token() + 1);
            assertThat(leases.probe().cohortHandOffs()).isZero();
            leases.release(next);
        }
    }

    /**
     * A refused renewal (the grant was broken elsewhere) ends cohort hand-offs of the grant at once:
     * the waiter goes to the database instead of being passed a lease the service knows is gone.
     */
    @DatabaseTest
    void aRefusedRenewalSendsTheWaiterToTheDatabase(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = cohort(db.newPool(4), table, 8);
                LeaseService operator = LeaseFixture.service(db.newPool(2), table)) {
            Lease held = leases.tryAcquire("job", "srv", LONG).orElseThrow();
            CompletableFuture<Lease> waiting = waitingLocally(leases, 1);
            assertThat(operator.forceRelease("job", "ops")).isTrue();
            assertThatThrownBy(() -> leases.renew(held, LONG)).isInstanceOf(LeaseNotHeldException.class);
            Lease next = waiting.get(10, TimeUnit.SECONDS);
            assertThat(next.token()).as("a new database grant").isEqualTo(held.token() + 1);
            assertThat(leases.probe().cohortHandOffs()).isZero();
            assertThatThrownBy(() -> leases.release(held)).isInstanceOf(LeaseNotHeldException.class);
            leases.release(next);
        }
    }

    /**
     * A release with a minimum hold (ShedLock's lockAtLeastFor) is never passed on in memory: the
     * grant is released to the database, held until the minimum counted from when the local holder
     * got it (at least: the database counts from the grant, plus the time until the hand-off).
     */
    @DatabaseTest
    void aMinimumHoldReleaseGoesToTheDatabaseAndCountsFromTheLocalHolder(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = cohort(db.newPool(4), table, 8);
                LeaseService other = LeaseFixture.service(db.newPool(2), table)) {
            Lease held = leases.tryAcquire("job", "srv", LONG).orElseThrow();
            CompletableFuture<Lease> first = waitingLocally(leases, 1);
            Thread.sleep(50); // the hand-off comes well after the grant
            leases.release(held);
            Lease local = first.get(5, TimeUnit.SECONDS);
            CompletableFuture<Lease> second = waitingLocally(leases, 1);
            leases.release(local, Duration.ofSeconds(10));
            Lease row = leases.find("job").orElseThrow();
            assertThat(row.expiresAt())
                    .as("held 10 s from the hand-off, not from the grant")
                    .isAfterOrEqualTo(
                            held.acquiredAt().plus(Duration.ofSeconds(10)).plusMillis(50));
            assertThat(leases.probe().cohortHandOffs()).isEqualTo(1);
            assertThat(other.tryAcquire("job", "elsewhere", LONG)).isEmpty();
            assertThat(second).isNotDone();
        }
    }

    /** A release of any grant of the owner (unlock) ends cohort hand-offs: the waiter goes to the database. */
    @DatabaseTest
    void unlockSendsLocalWaitersToTheDatabase(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = cohort(db.newPool(4), table, 8)) {
            Lease held = leases.tryAcquire("job", "srv", LONG).orElseThrow();
            CompletableFuture<Lease> waiting = waitingLocally(leases, 1);
            leases.unlock("job", "srv");
            Lease got = waiting.get(10, TimeUnit.SECONDS);
            assertThat(got.token()).as("a grant from the database").isEqualTo(held.token() + 1);
            assertThat(leases.probe().cohortHandOffs()).isZero();
            assertThatThrownBy(() -> leases.release(held)).isInstanceOf(LeaseNotHeldException.class);
            leases.release(got);
        }
    }

    /** Grants that run out unreleased are forgotten: a service taking many names keeps no memory of them. */
    @DatabaseTest(only = TestDatabase.Kind.H2)
    void grantsThatRanOutAreForgotten(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = cohort(db.newPool(2), table, 8)) {
            for (int i = 0; i < CohortHandOffs.SWEEP_EVERY - 2; i++) {
                assertThat(leases.tryAcquire("job-" + i, "srv", Duration.ofMillis(1)))
                        .isPresent();
            }
            Lease kept = leases.tryAcquire("kept", "srv", LONG).orElseThrow();
            assertThat(leases.probe().cohortGrants()).isEqualTo(CohortHandOffs.SWEEP_EVERY - 1);
            Thread.sleep(5); // every 1 ms grant has run out, by any estimate
            assertThat(leases.tryAcquire("next", "srv", LONG)).isPresent(); // the 256th grant sweeps
            assertThat(leases.probe().cohortGrants()).isEqualTo(2);
            leases.release(kept);
            assertThat(leases.probe().cohortGrants()).isEqualTo(1);
        }
    }

    /** A keep-alive guard on a passed-on lease renews the database grant, and its close passes the lease on. */
    @DatabaseTest
    void aGuardKeepsAPassedOnLeaseAliveAndItsClosePassesItOn(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = cohort(db.newPool(6), table, 8)) {
            Lease held = leases.tryAcquire("job", "srv", LONG).orElseThrow();
            CompletableFuture<Lease> second = waitingLocally(leases, 1);
            leases.release(held);
            Lease got = second.get(5, TimeUnit.SECONDS);
            CompletableFuture<Lease> third = waitingLocally(leases, 1);
            try (LeaseGuard guard = leases.keepAlive(got, Duration.ofSeconds(45), null)) {
                assertThat(guard.isValid()).isTrue();
                assertThat(guard.lease().expiresAt())
                        .isEqualTo(leases.find("job").orElseThrow().expiresAt())
                        .isAfter(got.expiresAt());
            }
            Lease last = third.get(5, TimeUnit.SECONDS);
            assertThat(last.token()).isEqualTo(got.token() + 1);
            assertThat(leases.probe().cohortHandOffs()).isEqualTo(2);
            leases.release(last);
        }
    }

    @DatabaseTest(only = TestDatabase.Kind.H2)
    void aBoundOutOfRangeIsRefused(TestDatabase db) {
        assertThatThrownBy(() -> LeaseService.builder(db.dataSource()).cohortHandOffs(-1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("-1");
        assertThatThrownBy(() -> LeaseService.builder(db.dataSource()).cohortHandOffs(10_001))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("10001");
    }
}
