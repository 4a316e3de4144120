package dev.holdfast.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.DatabaseException;
import dev.holdfast.lease.internal.BatchLeaseSql;
import dev.holdfast.lease.internal.LeaseSql;
import dev.holdfast.lease.internal.LeaseStores;
import dev.holdfast.lease.internal.PgLeaseSql;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static dev.holdfast.testing.TestDatabase.Kind.MARIADB;
import static dev.holdfast.testing.TestDatabase.Kind.POSTGRESQL;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Batched commits ({@link Batching}): calls that queue while a statement of their
 * kind is in flight go to the database together, as one multi-row statement, and each keeps its
 * own outcome. Each test holds the first statement in a {@link Gate} until the other calls have
 * queued, so the batch it checks forms every time (no timing luck).
 */
public class LeaseBatchingTest {

    private static final Duration LONG = Duration.ofSeconds(30);

    /** Records every statement executed; stalls the first one after {@link #arm} until it is opened. */
    static final class Gate implements LeaseFixture.StatementHook {
        final List<String> executed = new CopyOnWriteArrayList<>();
        private final AtomicReference<CountDownLatch[]> armed = new AtomicReference<>();
        /** Fails statements containing this text (null: none). */
        volatile String failing;

        void arm(CountDownLatch entered, CountDownLatch open) {
            armed.set(new CountDownLatch[] {entered, open});
        }

        @Override
        public Object execute(String sql, Callable<Object> statement) throws Exception {
            executed.add(sql);
            CountDownLatch[] latches = armed.getAndSet(null);
            if (latches != null) {
                latches[0].countDown();
                latches[1].await(10, TimeUnit.SECONDS);
            }
            String fail = failing;
            if (fail != null && sql.contains(fail)) {
                throw new SQLException("connection reset", "08006");
            }
            return statement.call();
        }
    }

    /** What each call of a batch returned (its value, or the exception it threw), and the statements the batch sent. */
    record Batch(List<Object> outcomes, List<String> statements) {}

    /**
     * Runs {@code first} alone, stalled in its statement, until {@code calls} have all queued behind
     * it; then lets it go and returns what the calls got and which statements they sent.
     */
    static Batch inOneBatch(LeaseService leases, Gate gate, Runnable first, List<Callable<Object>> calls)
            throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch open = new CountDownLatch(1);
        gate.arm(entered, open);
        CompletableFuture<Object> alone = onItsOwnThread(() -> {
            first.run();
            return null;
        });
        assertThat(entered.await(5, TimeUnit.SECONDS))
                .as("the first call's statement started")
                .isTrue();
        List<CompletableFuture<Object>> queued = new ArrayList<>();
        for (Callable<Object> call : calls) {
            queued.add(onItsOwnThread(call));
        }
        await("all calls queued")
                .atMost(LeaseFixture.AT_MOST)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(1))
                .until(() -> leases.probe().queuedForBatches() >= calls.size());
        int mark = gate.executed.size();
        open.countDown();
        alone.get(10, TimeUnit.SECONDS);
        List<Object> outcomes = new ArrayList<>();
        for (CompletableFuture<Object> f : queued) {
            outcomes.add(f.get(10, TimeUnit.SECONDS));
        }
        return new Batch(outcomes, List.copyOf(gate.executed.subList(mark, gate.executed.size())));
    }

    /** Batching with one statement of a kind in flight, so every call queued behind it goes in the next batch. */
    /**
     * Runs {@code call} on a thread of its own (the common pool may have fewer threads than the calls
     * that block together); completes with its result, or with the exception it threw as the result.
     */
    public static CompletableFuture<Object> onItsOwnThread(Callable<Object> call) {
        CompletableFuture<Object> result = new CompletableFuture<>();
        new Thread(
                        () -> {
                            try {
                                result.complete(call.call());
                            } catch (Throwable e) {
                                result.complete(e);
                            }
                        },
                        "test-batched-call")
                .start();
        return result;
    }

    private static LeaseService batching(javax.sql.DataSource ds, String table) {
        return LeaseService.builder(ds)
                .table(table)
                .batching(Batching.CONCURRENT)
                .tune(t -> t.batchesInFlight(1, 1))
                .build();
    }

    /** The batch statements of PostgreSQL and MariaDB. */
    private static BatchLeaseSql batchSql(TestDatabase db, String table) {
        return (BatchLeaseSql) sql(db, table);
    }

    private static LeaseSql sql(TestDatabase db, String table) {
        return LeaseStores.forDialect(
                        LeaseService.builder(db.dataSource())
                                .table(table)
                                .build()
                                .dialect(),
                        table)
                .sql();
    }

    @DatabaseTest(only = {POSTGRESQL, MARIADB})
    void acquiresQueuedBehindAStatementGoAsOneStatementEachWithItsOwnOutcome(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        Gate gate = new Gate();
        try (LeaseService leases = batching(LeaseFixture.hooked(db.newPool(4), gate), table);
                LeaseService other = LeaseFixture.service(db.newPool(2), table)) {
            Lease held = other.tryAcquire("held", "other", LONG).orElseThrow();
            Lease own = leases.tryAcquire("own", "me", LONG).orElseThrow();
            Lease ran =
                    other.tryAcquire("expired", "other", Duration.ofMillis(50)).orElseThrow();
            Thread.sleep(100); // the 50 ms TTL runs out
            String heldRow = LeaseFixture.dump(db, table)
                    .lines()
                    .filter(l -> l.contains("held"))
                    .findFirst()
                    .orElseThrow();

            String odd = "new \"b\", {x}\\y"; // array syntax in a name: bound as data, never parsed
            Batch batch = inOneBatch(
                    leases,
                    gate,
                    () -> assertThat(leases.tryAcquire("first", "me", LONG)).isPresent(),
                    List.of(
                            () -> leases.tryAcquire(odd, "me", LONG),
                            () -> leases.tryAcquire("held", "me", LONG),
                            () -> leases.tryAcquire("expired", "me", LONG),
                            () -> leases.tryAcquire("new-a", "you", LONG),
                            () -> leases.tryAcquire("NULL", "me", LONG),
                            () -> leases.tryAcquire("own", "me", LONG)));

            assertThat(batch.statements())
                    .as("one statement for the six calls")
                    .containsExactly(batchSql(db, table).acquireAllSql(6));
            assertThat(batch.outcomes().get(5))
                    .as("live, even for its own owner: an exclusive acquire refuses")
                    .isEqualTo(Optional.empty());
            assertThat(leases.find("own")).contains(own);
            Lease newB = granted(batch.outcomes().get(0));
            assertThat(newB.name()).isEqualTo(odd);
            assertThat(newB.owner()).isEqualTo("me");
            assertThat(newB.token()).isEqualTo(1);
            assertThat(batch.outcomes().get(1)).as("live: refused").isEqualTo(Optional.empty());
            Lease taken = granted(batch.outcomes().get(2));
            assertThat(taken.token()).as("a new grant of an expired lease").isEqualTo(ran.token() + 1);
            assertThat(taken.acquiredAt()).isAfter(ran.expiresAt());
            Lease newA = granted(batch.outcomes().get(3));
            assertThat(newA.owner()).isEqualTo("you");
            assertThat(Duration.between(newA.acquiredAt(), newA.expiresAt())).isEqualTo(LONG);
            Lease nullNamed = granted(batch.outcomes().get(4));
            assertThat(nullNamed.name()).isEqualTo("NULL");
            for (Lease lease : List.of(newB, taken, newA, nullNamed)) {
                assertThat(leases.find(lease.name())).contains(lease);
            }
            assertThat(LeaseFixture.dump(db, table))
                    .as("the refused lease is unchanged")
                    .contains(heldRow);
            assertThat(leases.find("held")).contains(held);
            assertThat(leases.probe().batchedCalls()).isEqualTo(6);
        }
    }

    @DatabaseTest(only = {POSTGRESQL, MARIADB})
    void releasesQueuedBehindAStatementGoAsOneStatementAndRefuseWhatIsNotHeld(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        Gate gate = new Gate();
        try (LeaseService leases = batching(LeaseFixture.hooked(db.newPool(4), gate), table)) {
            Lease first = leases.tryAcquire("first", "me", LONG).orElseThrow();
            Lease mine = leases.tryAcquire("mine", "me", LONG).orElseThrow();
            Lease forged = leases.tryAcquire("forged", "me", LONG).orElseThrow();
            Lease twice = leases.tryAcquire("twice", "me", LONG).orElseThrow();
            leases.release(twice);
            Lease ran =
                    leases.tryAcquire("ran-out", "me", Duration.ofMillis(50)).orElseThrow();
            Thread.sleep(100); // the 50 ms TTL runs out
            String before = LeaseFixture.dump(db, table);

            Batch batch = inOneBatch(
                    leases,
                    gate,
                    () -> leases.release(first),
                    List.of(
                            () -> release(leases, mine),
                            () -> release(
                                    leases,
                                    new Lease(
                                            "forged",
                                            "me",
                                            forged.token() + 1,
                                            forged.acquiredAt(),
                                            forged.expiresAt())),
                            () -> release(leases, twice),
                            () -> release(leases, ran)));

            if (db.kind() == MARIADB) {
                // A batch leaves a lease that a waiter may wait for to a release of its own, which hands it on: each
                // refused call tries once more alone (the plain release, then the hand-off: a read of the first waiter,
                // which finds no lease held, then the one statement), then reads why.
                String handingOff =
                        "INSERT INTO " + table + " (name, owner, token, acquired_at, expires_at, handed_to, served)";
                assertThat(batch.statements())
                        .as("one statement for the four calls, then each refused call alone")
                        .hasSize(13)
                        .startsWith(batchSql(db, table).releaseAllSql(4, true));
                assertThat(batch.statements())
                        .filteredOn(statement -> statement.startsWith("SELECT q.owner, q.lease_owner"))
                        .hasSize(3);
                assertThat(batch.statements())
                        .filteredOn(sql(db, table).releaseSql(true, false, false)::equals)
                        .hasSize(3);
                assertThat(batch.statements())
                        .filteredOn(statement -> statement.startsWith(handingOff))
                        .hasSize(3);
                assertThat(batch.statements())
                        .filteredOn(sql(db, table).diagnoseSql()::equals)
                        .hasSize(3);
            } else {
                assertThat(batch.statements())
                        .as("one statement for the four calls, then a read of each refused row to say why")
                        .containsExactly(
                                batchSql(db, table).releaseAllSql(4, true),
                                sql(db, table).diagnoseSql(),
                                sql(db, table).diagnoseSql(),
                                sql(db, table).diagnoseSql());
            }
            assertThat(batch.outcomes().get(0)).isEqualTo("released");
            for (int i = 1; i < 4; i++) {
                assertThat(batch.outcomes().get(i)).isInstanceOf(LeaseNotHeldException.class);
            }
            assertThat(((LeaseNotHeldException) batch.outcomes().get(2)).reason())
                    .isEqualTo(LeaseNotHeldException.Reason.RELEASED);
            Lease released = leases.find("mine").orElseThrow();
            assertThat(released.expiresAt()).as("released").isEqualTo(released.acquiredAt());
            String after = LeaseFixture.dump(db, table);
            for (String untouched : List.of("forged", "twice", "ran-out")) {
                assertThat(after.lines().filter(l -> l.contains(untouched)).toList())
                        .as("refused: " + untouched + " unchanged")
                        .isEqualTo(before.lines()
                                .filter(l -> l.contains(untouched))
                                .toList());
            }
            assertThat(leases.tryAcquire("forged", "you", LONG))
                    .as("still held by its owner")
                    .isEmpty();
        }
    }

    /**
     * Issue 31, item 4: a release never waits for a batch longer than a statement. An acquire is stuck in
     * its statement (the gate holds it, as a row lock elsewhere would);
     * releases of the same service still go to the database and complete while the acquire is stuck, and
     * a release that finds another in flight goes in the very next statement.
     */
    @DatabaseTest(only = {POSTGRESQL, MARIADB})
    void aReleaseCompletesWhileAnAcquireOfItsServiceIsStuckInItsStatement(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        Gate gate = new Gate();
        Batching batching = Batching.CONCURRENT;
        try (LeaseService leases = LeaseService.builder(LeaseFixture.hooked(db.newPool(6), gate))
                .table(table)
                .batching(batching)
                .tune(t -> t.batchLoneCalls(true))
                .build()) {
            List<Lease> mine = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                mine.add(leases.tryAcquire("mine-" + i, "me", LONG).orElseThrow());
            }
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch open = new CountDownLatch(1);
            gate.arm(entered, open);
            CompletableFuture<Object> stuck = onItsOwnThread(() -> leases.tryAcquire("slow", "me", LONG));
            assertThat(entered.await(10, TimeUnit.SECONDS))
                    .as("the acquire's statement started")
                    .isTrue();

            assertThat(release(leases, mine.get(0)))
                    .as(batching + ": released while the acquire is stuck")
                    .isEqualTo("released");
            List<CompletableFuture<Object>> together = List.of(
                    onItsOwnThread(() -> release(leases, mine.get(1))),
                    onItsOwnThread(() -> release(leases, mine.get(2))));
            for (CompletableFuture<Object> release : together) {
                assertThat(release.get(20, TimeUnit.SECONDS)).isEqualTo("released");
            }
            assertThat(stuck)
                    .as(batching + ": the acquire is still in its statement")
                    .isNotDone();
            for (Lease released : mine) {
                Lease row = leases.find(released.name()).orElseThrow();
                assertThat(row.expiresAt()).as("released in the database").isEqualTo(row.acquiredAt());
            }
            open.countDown();
            assertThat(granted(stuck.get(20, TimeUnit.SECONDS)).name()).isEqualTo("slow");
            leases.release(leases.find("slow").orElseThrow());
        }
    }

    /**
     * Issue 31, item 5: {@link LeaseService#batchingStats()} counts exactly, per kind, the calls and the
     * statements they took: a call alone is one call in one statement; three calls queued behind it, one.
     */
    @DatabaseTest(only = {POSTGRESQL, MARIADB})
    void batchingStatsCountCallsAndStatementsOfEachKind(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        Gate gate = new Gate();
        try (LeaseService leases = batching(LeaseFixture.hooked(db.newPool(4), gate), table)) {
            assertThat(leases.batchingStats()).isEqualTo(new BatchingStats(0, 0, 0, 0, 0));
            Batch acquires = inOneBatch(
                    leases,
                    gate,
                    () -> assertThat(leases.tryAcquire("first", "me", LONG)).isPresent(),
                    List.of(
                            () -> leases.tryAcquire("a", "me", LONG),
                            () -> leases.tryAcquire("b", "me", LONG),
                            () -> leases.tryAcquire("c", "me", LONG)));
            BatchingStats afterAcquires = leases.batchingStats();
            assertThat(afterAcquires).isEqualTo(new BatchingStats(4, 2, 0, 0, 0));
            assertThat(afterAcquires.acquireCallsPerStatement()).isEqualTo(2.0);
            assertThat(afterAcquires.releaseCallsPerStatement()).as("none sent").isZero();

            List<Lease> held =
                    acquires.outcomes().stream().map(LeaseBatchingTest::granted).toList();
            Lease first = leases.find("first").orElseThrow();
            inOneBatch(
                    leases,
                    gate,
                    () -> leases.release(first),
                    held.stream()
                            .<Callable<Object>>map(l -> () -> release(leases, l))
                            .toList());
            assertThat(leases.tryAcquire("alone", "me", LONG)).isPresent();
            BatchingStats stats = leases.batchingStats();
            assertThat(stats).isEqualTo(new BatchingStats(5, 3, 4, 2, 0));
            assertThat(stats.acquireCallsPerStatement()).isEqualTo(5.0 / 3);
        }
        try (LeaseService off =
                LeaseService.builder(db.dataSource()).table(table).build()) {
            assertThat(off.batching()).as("the default").isEqualTo(Batching.OFF);
            assertThat(off.probe().batching())
                    .as("batching off: no batching machinery built")
                    .isFalse();
            off.release(off.tryAcquire("unbatched", "me", LONG).orElseThrow());
            assertThat(off.batchingStats())
                    .as("batching off: nothing counted")
                    .isEqualTo(new BatchingStats(0, 0, 0, 0, 0));
        }
    }

    /** Off by default; a refused batching changes nothing; each mode reaches the internals as itself. */
    @Test
    void offIsTheDefaultAndABadBatchingChangesNothing() {
        LeaseService.Builder builder =
                LeaseService.builder(new org.h2.jdbcx.JdbcDataSource()).dialect(dev.holdfast.jdbc.dialect.Dialect.H2);
        try (LeaseService leases = builder.build()) {
            assertThat(leases.batching()).as("the default").isEqualTo(Batching.OFF);
        }
        builder.batching(Batching.CONCURRENT);
        assertThatThrownBy(() -> builder.batching(null)).isInstanceOf(IllegalArgumentException.class);
        try (LeaseService leases = builder.build()) {
            assertThat(leases.batching())
                    .as("the refused batching changed nothing: concurrent is still set")
                    .isEqualTo(Batching.CONCURRENT);
            assertThat(leases.probe().batching())
                    .as("on H2 concurrent runs as off: no batching machinery")
                    .isFalse();
        }
        assertThat(Batching.values()).containsExactly(Batching.OFF, Batching.CONCURRENT);
        for (Batching batching : Batching.values()) {
            assertThat(batching.mode().name()).as("the internals' mode").isEqualTo(batching.name());
            assertThat(batching).hasToString(batching.name());
        }
    }

    private static Object release(LeaseService leases, Lease lease) {
        leases.release(lease);
        return "released";
    }

    @SuppressWarnings("unchecked")
    private static Lease granted(Object outcome) {
        assertThat(outcome).isInstanceOf(Optional.class);
        return ((Optional<Lease>) outcome).orElseThrow();
    }

    @DatabaseTest(only = {POSTGRESQL, MARIADB})
    void aFailedBatchFailsEachCallNamingItsLeaseChangesNothingAndLeaksNoConnection(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        Gate gate = new Gate();
        HikariDataSource pool = db.newPool(4);
        try (LeaseService leases = batching(LeaseFixture.hooked(pool, gate), table)) {
            Lease first = leases.tryAcquire("first", "me", LONG).orElseThrow();
            Lease a = leases.tryAcquire("a", "me", LONG).orElseThrow();
            Lease b = leases.tryAcquire("b", "me", LONG).orElseThrow();
            String before = LeaseFixture.dump(db, table);
            gate.failing = batchSql(db, table).releaseAllSql(2, true);

            Batch releases = inOneBatch(
                    leases,
                    gate,
                    () -> leases.release(first),
                    List.of(() -> release(leases, a), () -> release(leases, b)));
            gate.failing = batchSql(db, table).acquireAllSql(2);
            Batch acquires = inOneBatch(
                    leases,
                    gate,
                    () -> assertThat(leases.tryAcquire("first", "me", LONG)).isPresent(),
                    List.of(() -> leases.tryAcquire("c", "me", LONG), () -> leases.tryAcquire("d", "me", LONG)));
            gate.failing = null;

            for (Batch batch : List.of(releases, acquires)) {
                assertThat(batch.statements()).hasSize(1);
            }
            assertThat(releases.outcomes()).allSatisfy(o -> assertThat(o).isInstanceOf(DatabaseException.class));
            assertThat(((Exception) releases.outcomes().get(0)).getMessage())
                    .contains("releasing lease 'a'")
                    .contains("08006");
            assertThat(((Exception) releases.outcomes().get(1)).getMessage()).contains("releasing lease 'b'");
            assertThat(((Exception) acquires.outcomes().get(0)).getMessage()).contains("acquiring lease 'c' for 'me'");
            assertThat(((Exception) acquires.outcomes().get(1)).getMessage()).contains("acquiring lease 'd' for 'me'");
            String after = LeaseFixture.dump(db, table);
            assertThat(after.lines().filter(l -> !l.contains("first")).toList())
                    .as("nothing changed but the first calls' lease")
                    .isEqualTo(before.lines().filter(l -> !l.contains("first")).toList());
            assertThat(pool.getHikariPoolMXBean().getActiveConnections())
                    .as("connections back in the pool")
                    .isZero();

            leases.release(a); // the batches are not stuck: the next calls go through
            leases.release(b);
            assertThat(leases.tryAcquire("c", "me", LONG)).isPresent();
        }
    }

    @DatabaseTest(only = {POSTGRESQL, MARIADB})
    void callsOfOneNameNeverShareABatch(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        Gate gate = new Gate();
        try (LeaseService leases = batching(LeaseFixture.hooked(db.newPool(4), gate), table)) {
            List<Callable<Object>> calls = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                String owner = "owner-" + i;
                calls.add(() -> leases.tryAcquire("same", owner, LONG));
            }
            calls.add(() -> leases.tryAcquire("other", "owner-0", LONG));
            Batch batch = inOneBatch(
                    leases,
                    gate,
                    () -> assertThat(leases.tryAcquire("first", "me", LONG)).isPresent(),
                    calls);

            assertThat(batch.outcomes()).as("no call failed").noneMatch(o -> o instanceof Exception);
            assertThat(batch.outcomes().subList(0, 4).stream().filter(o -> ((Optional<?>) o).isPresent()))
                    .as("one grant of 'same'")
                    .hasSize(1);
            assertThat(batch.statements()).as("'same' goes once per batch").hasSize(4);
            assertThat(batch.statements().get(0)).isEqualTo(batchSql(db, table).acquireAllSql(2));
            assertThat(granted(batch.outcomes().get(4)).token()).isEqualTo(1);
        }
    }

    /** A batched release of a lease a {@link LeaseService#acquire} caller waits for still hands it over. */
    @DatabaseTest(only = {POSTGRESQL, MARIADB})
    void aBatchedReleaseHandsTheLeaseToItsWaiter(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        Gate gate = new Gate();
        try (LeaseService leases = batching(LeaseFixture.hooked(db.newPool(4), gate), table);
                // No safety poll during the test: on PostgreSQL the waiter takes the lease only from the hand-off.
                LeaseService elsewhere = LeaseFixture.builder(db, db.newPool(4))
                        .table(table)
                        .tune(t -> t.safetyPoll(Duration.ofMinutes(1)))
                        .build()) {
            Lease first = leases.tryAcquire("first", "me", LONG).orElseThrow();
            Lease a = leases.tryAcquire("a", "me", LONG).orElseThrow();
            Lease b = leases.tryAcquire("b", "me", LONG).orElseThrow();
            CompletableFuture<Lease> waiter =
                    LeaseFixture.lockAsync(elsewhere, "a", "waiter", LONG, Duration.ofSeconds(20));
            LeaseFixture.awaitQueued(db, table, 1);
            if (db.kind() == POSTGRESQL) {
                LeaseFixture.awaitListenedEntry(db, table); // else it polls, and may take the lease itself
            }

            Batch batch = inOneBatch(
                    leases,
                    gate,
                    () -> leases.release(first),
                    List.of(() -> release(leases, a), () -> release(leases, b)));

            assertThat(batch.outcomes()).containsExactly("released", "released");
            assertThat(batch.statements().get(0)).isEqualTo(batchSql(db, table).releaseAllSql(2, true));
            Lease handed = waiter.get(10, TimeUnit.SECONDS);
            assertThat(handed.owner()).isEqualTo("waiter");
            assertThat(handed.token()).isEqualTo(a.token() + 1);
            if (db.kind() == POSTGRESQL) {
                assertThat(batch.statements())
                        .as("the release, then the hand-off")
                        .hasSize(2);
                assertThat(elsewhere.probe().handOffsReceived()).isEqualTo(1);
            }
            elsewhere.release(handed);
        }
    }

    /**
     * PostgreSQL: a hand-off that fails after the batch's release committed fails only the call whose
     * lease had the waiter (its release stands, as without batching); the waiter still gets the lease.
     */
    @DatabaseTest(only = POSTGRESQL)
    void aHandOffThatFailsAfterABatchedReleaseFailsOnlyItsOwnCall(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        Gate gate = new Gate();
        try (LeaseService leases = batching(LeaseFixture.hooked(db.newPool(4), gate), table);
                LeaseService elsewhere = LeaseFixture.service(db.newPool(4), table)) {
            Lease first = leases.tryAcquire("first", "me", LONG).orElseThrow();
            Lease a = leases.tryAcquire("a", "me", LONG).orElseThrow();
            Lease b = leases.tryAcquire("b", "me", LONG).orElseThrow();
            CompletableFuture<Lease> waiter =
                    LeaseFixture.lockAsync(elsewhere, "a", "waiter", LONG, Duration.ofSeconds(20));
            LeaseFixture.awaitQueued(db, table, 1);
            gate.failing = ((PgLeaseSql) sql(db, table)).handOffSql();

            Batch batch = inOneBatch(
                    leases,
                    gate,
                    () -> leases.release(first),
                    List.of(() -> release(leases, a), () -> release(leases, b)));
            gate.failing = null;

            assertThat(batch.outcomes().get(0)).isInstanceOf(DatabaseException.class);
            assertThat(((Exception) batch.outcomes().get(0)).getMessage())
                    .contains("releasing lease 'a', then handing it to its first waiter");
            assertThat(batch.outcomes().get(1)).isEqualTo("released");
            assertThat(batch.statements())
                    .containsExactly(
                            batchSql(db, table).releaseAllSql(2, true), ((PgLeaseSql) sql(db, table)).handOffSql());
            Lease handed = waiter.get(10, TimeUnit.SECONDS);
            assertThat(handed.owner())
                    .as("the waiter takes the released lease at its next check")
                    .isEqualTo("waiter");
            assertThat(handed.token()).isEqualTo(a.token() + 1);
            assertThatThrownBy(() -> leases.release(a)).isInstanceOf(LeaseNotHeldException.class);
            elsewhere.release(handed);
        }
    }

    @DatabaseTest(only = TestDatabase.Kind.H2)
    void batchingIsOffOnH2WhereAStatementCostsNoRoundTrip(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = batching(db.dataSource(), table)) {
            List<CompletableFuture<Object>> calls = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                String name = "n" + t;
                calls.add(onItsOwnThread(() -> {
                    for (int i = 0; i < 50; i++) {
                        leases.release(leases.tryAcquire(name, "me", LONG).orElseThrow());
                    }
                    return "done";
                }));
            }
            for (CompletableFuture<Object> call : calls) {
                assertThat(call.get(60, TimeUnit.SECONDS)).isEqualTo("done");
            }
            assertThat(leases.probe().batchedCalls()).isZero();
            assertThat(leases.find("n0").orElseThrow().token()).isEqualTo(50);
        }
    }
}
