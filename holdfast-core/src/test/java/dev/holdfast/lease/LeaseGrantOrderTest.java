package dev.holdfast.lease;

import dev.holdfast.LockWaits;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.lease.internal.LeaseRow;
import dev.holdfast.lease.internal.LeaseStore;
import dev.holdfast.lease.internal.LeaseStores;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Grant times follow tokens: no statement leaves a lease row ending before it began, so a later grant
 * (which needs the row expired by its "now") never reports an {@code acquiredAt} before an earlier
 * token's. Each test forces the interleaving that broke it: a statement reads its now, then waits
 * longer than its TTL for the row lock, which a second connection holds, while the row is granted.
 */
class LeaseGrantOrderTest {

    private static final long TTL_MICROS = 100_000;
    private static final long LONG_MICROS = 60_000_000;
    private static final long QUEUE_MICROS = 60_000_000;
    private static final Duration BOUND = Duration.ofSeconds(20);

    /**
     * The stress test's token disorder (PostgreSQL, loaded machine): a queued waiter's attempt read
     * its now, then waited for the row while the holder's release handed the lease to that waiter;
     * picking the handed grant up, it extended it from that stale now, to before the grant's own
     * {@code acquired_at}, and an acquire that had read its now in between (after the stale expiry,
     * before the hand-off) was granted the next token with an earlier {@code acquiredAt}.
     */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void aWaiterPickingUpItsHandedGrantAfterALongWaitForTheRowKeepsItLive(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        LeaseStore jdbc = LeaseStores.forDialect(Dialect.POSTGRESQL, table);
        ExecutorService executor = Executors.newFixedThreadPool(2);
        try (Connection listener = LeaseFixture.listener(db);
                Connection holder = db.connection();
                Connection waiter = db.connection();
                Connection other = db.connection();
                Connection blocker = db.connection()) {
            int pid = pid(listener);
            LeaseRow held =
                    jdbc.acquire(holder, "job", "holder", LONG_MICROS, false).orElseThrow();
            assertThat(jdbc.acquireOrQueue(waiter, "job", "waiter", "w1", TTL_MICROS, QUEUE_MICROS, false, pid))
                    .as("queued behind the holder")
                    .isEmpty();

            blocker.setAutoCommit(false);
            lockRow(blocker, table);
            Future<Optional<LeaseRow>> attempt = executor.submit(
                    () -> jdbc.acquireOrQueue(waiter, "job", "waiter", "w1", TTL_MICROS, QUEUE_MICROS, true, pid));
            LockWaits.awaitWaitingForALock(db, "%" + table + " %", 1);
            awaitClockPast(db, TTL_MICROS); // the attempt's now is older than its TTL
            Future<Optional<LeaseRow>> later =
                    executor.submit(() -> jdbc.acquire(other, "job", "other", LONG_MICROS, false));
            LockWaits.awaitWaitingForALock(db, "%" + table + " %", 2);
            // The holder releases in the transaction that holds the row: the lease goes to the waiter.
            assertThat(jdbc.release(blocker, "job", "holder", held.token(), false, null))
                    .isTrue();
            blocker.commit();

            LeaseRow handed = attempt.get(BOUND.toSeconds(), TimeUnit.SECONDS).orElseThrow();
            Optional<LeaseRow> next = later.get(BOUND.toSeconds(), TimeUnit.SECONDS);
            assertThat(handed.token()).isEqualTo(held.token() + 1);
            assertThat(handed.owner()).isEqualTo("waiter");
            assertThat(handed.expiresAt())
                    .as("the handed grant ends after it began")
                    .isAfter(handed.acquiredAt());
            assertThat(next)
                    .as("no grant while the handed one is live (its now was before the hand-off)")
                    .isEmpty();
            assertRowEndsAfterItBegan(jdbc, holder);
        } finally {
            executor.shutdownNow();
        }
    }

    /**
     * A re-entrant acquire (tryLock) read its now, then waited longer than its TTL for the row while
     * another call of the same owner was granted the lease: its renewal must not end that grant before
     * it began. (PostgreSQL extends from its clock after the row lock; H2 and MariaDB, whose now is
     * the statement's, keep the expiry at least at the grant's start.) An exclusive acquire after
     * it is refused while the grant is live, and is never granted a token with an earlier start.
     */
    @DatabaseTest
    void aReentryThatWaitedForTheRowNeverEndsTheGrantBeforeItBegan(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        LeaseStore jdbc = LeaseStores.forDialect(Dialect.valueOf(db.kind().name()), table);
        ExecutorService executor = Executors.newFixedThreadPool(1);
        try (Connection reentrant = db.connection();
                Connection other = db.connection();
                Connection blocker = db.connection()) {
            LeaseRow first =
                    jdbc.acquire(other, "job", "srv", TTL_MICROS, false).orElseThrow();
            jdbc.release(other, "job", "srv", first.token(), false, null);

            blocker.setAutoCommit(false);
            lockRow(blocker, table);
            Future<Optional<LeaseRow>> reentry =
                    executor.submit(() -> jdbc.acquire(reentrant, "job", "srv", TTL_MICROS, true));
            LockWaits.awaitWaitingForALock(db, "%" + table + " %", 1);
            awaitClockPast(db, TTL_MICROS);
            // Another call of the same owner is granted the lease in the transaction that holds the row.
            LeaseRow granted =
                    jdbc.acquire(blocker, "job", "srv", LONG_MICROS, false).orElseThrow();
            blocker.commit();

            LeaseRow renewed = reentry.get(BOUND.toSeconds(), TimeUnit.SECONDS).orElseThrow();
            assertThat(renewed.token()).as("a renewal of that grant").isEqualTo(granted.token());
            assertThat(renewed.acquiredAt()).isEqualTo(granted.acquiredAt());
            assertThat(renewed.expiresAt()).as("not ended before it began").isAfterOrEqualTo(renewed.acquiredAt());
            assertRowEndsAfterItBegan(jdbc, other);
            Optional<LeaseRow> next = jdbc.acquire(other, "job", "next", LONG_MICROS, false);
            next.ifPresent(lease -> assertThat(lease.acquiredAt())
                    .as("a later token starts no earlier")
                    .isAfterOrEqualTo(granted.acquiredAt()));
        } finally {
            executor.shutdownNow();
        }
    }

    /**
     * MariaDB's exclusive acquire tells its own grant from a refusal by {@code acquired_at} equal to
     * its statement's now; a refusal that starts in the grant's microsecond moves {@code acquired_at}
     * 1 µs to keep the two apart. It moved it back: after the release, a statement whose now was 1 µs
     * before the grant's could be granted the next token with an {@code acquiredAt} before the one the
     * holder was told. The statements' clocks are fixed with {@code SET timestamp}.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aRefusalInTheGrantsMicrosecondLetsNoLaterGrantStartEarlier(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        LeaseStore jdbc = LeaseStores.forDialect(Dialect.MARIADB, table);
        try (Connection holder = db.connection();
                Connection refused = db.connection();
                Connection early = db.connection()) {
            java.math.BigDecimal now = new java.math.BigDecimal(db.queryString("SELECT UNIX_TIMESTAMP(NOW(6))"));
            java.math.BigDecimal microsecond = new java.math.BigDecimal("0.000001");
            try {
                setClock(holder, now);
                setClock(refused, now);
                setClock(early, now.subtract(microsecond));
                LeaseRow granted = jdbc.acquire(holder, "job", "holder", LONG_MICROS, false)
                        .orElseThrow();
                assertThat(jdbc.acquire(refused, "job", "other", LONG_MICROS, false))
                        .as("refused in its microsecond")
                        .isEmpty();
                assertThat(jdbc.release(holder, "job", "holder", granted.token(), false, null))
                        .isTrue();
                Optional<LeaseRow> next = jdbc.acquire(early, "job", "early", LONG_MICROS, false);
                next.ifPresent(lease -> assertThat(lease.acquiredAt())
                        .as("the next token %s starts no earlier than %s", lease, granted)
                        .isAfterOrEqualTo(granted.acquiredAt()));
                assertThat(next).as("now before the grant began: refused").isEmpty();
                assertRowEndsAfterItBegan(jdbc, holder);
            } finally {
                for (Connection c : List.of(holder, refused, early)) {
                    try (Statement s = c.createStatement()) {
                        s.execute("SET timestamp = DEFAULT");
                    }
                }
            }
        }
    }

    private static void setClock(Connection c, java.math.BigDecimal epochSeconds) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("SET timestamp = " + epochSeconds.toPlainString());
        }
    }

    private static void assertRowEndsAfterItBegan(LeaseStore jdbc, Connection c) throws SQLException {
        LeaseRow row = jdbc.read(c, "job").orElseThrow();
        assertThat(row.expiresAt()).as("the row %s ends after it began", row).isAfterOrEqualTo(row.acquiredAt());
    }

    private static void lockRow(Connection c, String table) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT token FROM " + table + " WHERE name = ? FOR UPDATE")) {
            ps.setString(1, "job");
            ps.executeQuery().close();
        }
    }

    private static int pid(Connection listener) throws SQLException {
        try (Statement s = listener.createStatement();
                ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    /** Waits until the database's clock has moved more than {@code micros} past its reading now. */
    private static void awaitClockPast(TestDatabase db, long micros) throws Exception {
        String now = switch (db.kind()) {
            case POSTGRESQL -> "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)";
            case MARIADB -> "CAST(UNIX_TIMESTAMP(SYSDATE(6)) * 1000000 AS SIGNED)";
            case H2 ->
                "DATEDIFF(MICROSECOND, TIMESTAMP WITH TIME ZONE '1970-01-01 00:00:00+00', " + Dialect.H2.clock() + ")";
        };
        long until = db.queryLong("SELECT " + now) + micros + 20_000;
        await("the database's clock moving past " + until)
                .atMost(BOUND)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(5))
                .until(() -> db.queryLong("SELECT " + now) > until);
    }
}
