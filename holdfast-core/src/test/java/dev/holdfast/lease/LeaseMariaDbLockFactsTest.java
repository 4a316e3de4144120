package dev.holdfast.lease;

import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * What MariaDB wake-ups rely on in {@code GET_LOCK}, re-verified on the server the tests run against:
 * a sleeper is given the lock when its holder gives it back or its session ends; sleepers are given
 * it one at a time, in the order they began to sleep; a fractional timeout is honoured; and
 * {@code RELEASE_ALL_LOCKS()} gives back every lock of the session, however often it was taken; and how
 * {@code KILL QUERY} meets a sleeping and an idle session.
 */
class LeaseMariaDbLockFactsTest {

    /**
     * A thread per wait: the waits block in the server, and two must be asleep at once. Not {@code supplyAsync}'s
     * default executor: on two cores, on Java 25, the second wait queued behind the first and never slept (Java 17
     * gave each a thread of its own).
     */
    private final ExecutorService sessions = Executors.newCachedThreadPool();

    @org.junit.jupiter.api.AfterEach
    void stopWaits() {
        sessions.shutdownNow();
    }

    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void sleepersAreGivenTheLockOneAtATimeInTheOrderTheyBeganToSleep(TestDatabase db) throws Exception {
        String lock = db.newTableName("facts_lock");
        try (Connection holder = LeaseFixture.unpooled(db);
                Connection first = LeaseFixture.unpooled(db);
                Connection second = LeaseFixture.unpooled(db)) {
            assertThat(value(holder, "SELECT GET_LOCK(?, 0)", lock)).isEqualTo(1);
            assertThat(value(first, "SELECT GET_LOCK(?, 0.2)", lock))
                    .as("a fraction of a second, then 0")
                    .isZero();
            CompletableFuture<Long> firstSleeps =
                    CompletableFuture.supplyAsync(() -> value(first, "SELECT GET_LOCK(?, 60)", lock), sessions);
            awaitSleepers(db, lock, 1, firstSleeps);
            CompletableFuture<Long> secondSleeps =
                    CompletableFuture.supplyAsync(() -> value(second, "SELECT GET_LOCK(?, 60)", lock), sessions);
            awaitSleepers(db, lock, 2, firstSleeps, secondSleeps);
            assertThat(value(holder, "SELECT RELEASE_LOCK(?)", lock)).isEqualTo(1);
            assertThat(firstSleeps.get(30, TimeUnit.SECONDS)).isEqualTo(1);
            awaitSleepers(db, lock, 1, secondSleeps);
            assertThat(secondSleeps)
                    .as("the second sleeps on while the first holds it")
                    .isNotDone();
            first.close(); // its session ends: the lock goes to the next sleeper
            assertThat(secondSleeps.get(30, TimeUnit.SECONDS)).isEqualTo(1);
            assertThat(value(second, "SELECT GET_LOCK(?, 0)", lock))
                    .as("taken again: counted")
                    .isEqualTo(1);
            assertThat(value(second, "SELECT RELEASE_ALL_LOCKS()", lock))
                    .as("both counts")
                    .isEqualTo(2);
            assertThat(value(holder, "SELECT IS_USED_LOCK(?) IS NULL", lock)).isEqualTo(1);
        }
    }

    /**
     * What the wake-ups rely on in {@code KILL QUERY}: a kill of an idle session is lost (its next statement
     * runs to its end, so a waiter must look for its reason to wake in the statement that waits); a kill
     * during a wait for a user-level lock that another session holds ends it at once with NULL (not an
     * error) and leaves the connection usable; a kill of an id no session has fails with 1094.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aKillEndsTheLockWaitItMeetsAndIsLostOnAnIdleSession(TestDatabase db) throws Exception {
        String bell = "holdfast_facts_bell_" + System.nanoTime();
        try (Connection waiter = LeaseFixture.unpooled(db);
                Connection holder = LeaseFixture.unpooled(db);
                Connection killer = LeaseFixture.unpooled(db)) {
            assertThat(value(holder, "SELECT GET_LOCK(?, 0)", bell)).isOne();
            long id = value(waiter, "SELECT CONNECTION_ID()", null);
            kill(killer, id);
            assertThat(nullable(waiter, "SELECT IF(1 = 0, 2, GET_LOCK(?, 0.01))", bell))
                    .as("the kill before it: lost")
                    .isZero();
            CompletableFuture<Long> waits = CompletableFuture.supplyAsync(
                    () -> nullable(waiter, "SELECT IF(1 = 0, 2, GET_LOCK(?, 60))", bell), sessions);
            await("waiting")
                    .atMost(LeaseFixture.AT_MOST)
                    .pollInterval(Duration.ofMillis(5))
                    .until(() -> db.queryLong(
                                    "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ? AND INFO LIKE ?",
                                    id,
                                    "%GET_LOCK(%, 60)%")
                            == 1);
            kill(killer, id);
            assertThat(waits.get(30, TimeUnit.SECONDS))
                    .as("ended by the kill: NULL")
                    .isNull();
            assertThat(value(waiter, "SELECT 1", null)).as("usable").isOne();
            holder.close(); // the holder's session ends, and its lock with it: the next wait takes it
            assertThat(nullable(waiter, "SELECT IF(1 = 0, 2, GET_LOCK(?, 60))", bell))
                    .isOne();
            assertThat(catchThrowable(() -> kill(killer, 4_000_000_000L)))
                    .isInstanceOfSatisfying(
                            SQLException.class,
                            e -> assertThat(e.getErrorCode()).isEqualTo(1094));
        }
    }

    /** The one value of {@code sql}, with {@code lock} bound, or null. */
    private static @org.jspecify.annotations.Nullable Long nullable(Connection c, String sql, String lock) {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, lock);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long v = rs.getLong(1);
                return rs.wasNull() ? null : v;
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void kill(Connection c, long id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("KILL QUERY ?")) {
            ps.setLong(1, id);
            ps.execute();
        }
    }

    /**
     * Waits until {@code sleepers} sessions sleep on {@code lock}; fails at once, saying how, if one of the
     * {@code waits} that should sleep ended (a wait that ends early is what this test looks for, not a timeout).
     */
    @SafeVarargs
    private static void awaitSleepers(TestDatabase db, String lock, int sleepers, CompletableFuture<Long>... waits) {
        await(sleepers + " sessions sleeping on " + lock)
                .atMost(LeaseFixture.AT_MOST)
                .pollInterval(Duration.ofMillis(5))
                .until(() -> {
                    for (CompletableFuture<Long> wait : waits) {
                        assertThat(wait)
                                .as(
                                        "a wait on %s that should sleep; the server's sessions: %s",
                                        lock,
                                        db.queryString(
                                                "SELECT GROUP_CONCAT(CONCAT(ID, ' ', COMMAND, ' ', COALESCE(STATE, ''),"
                                                        + " ' ', COALESCE(INFO, '')) SEPARATOR '; ') FROM information_schema.PROCESSLIST"
                                                        + " WHERE INFO IS NULL OR INFO NOT LIKE '%PROCESSLIST%'"))
                                .isNotDone();
                    }
                    return db.queryLong(
                                    "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE ?",
                                    "SELECT GET_LOCK('" + lock + "', 60)")
                            == sleepers;
                });
    }

    /** The one value of {@code sql}, with {@code lock} bound if it has a parameter. */
    private static long value(Connection c, String sql, @org.jspecify.annotations.Nullable String lock) {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            if (sql.contains("?")) {
                ps.setString(1, lock);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
