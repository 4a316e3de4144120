package dev.holdfast.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.DatabaseException;
import dev.holdfast.jdbc.dialect.SqlErrorKind;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/** Failures of the connection under a lease: the server kills it mid-hold or mid-acquire. */
class LeaseFaultTest {

    private static long sessionId(TestDatabase db, Connection c) throws SQLException {
        String sql = db.kind() == TestDatabase.Kind.POSTGRESQL ? "SELECT pg_backend_pid()" : "SELECT CONNECTION_ID()";
        try (PreparedStatement ps = c.prepareStatement(sql);
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void kill(TestDatabase db, long id) throws SQLException {
        if (db.kind() == TestDatabase.Kind.POSTGRESQL) {
            db.queryString("SELECT pg_terminate_backend(?)::text", (int) id);
        } else {
            db.execute("KILL " + id);
        }
    }

    /**
     * The holder's server connection dies while it holds the lease. The lease is not tied to a
     * connection, so it stays the holder's until its TTL; the holder's next statement fails with a
     * clear connection error; nobody else gets the lease before it expires by database time, and the
     * next acquirer then succeeds with a greater token.
     */
    @DatabaseTest(only = {TestDatabase.Kind.POSTGRESQL, TestDatabase.Kind.MARIADB})
    void holderConnectionKilledMidHold(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        HikariDataSource holderPool = db.newPool(1);
        try (LeaseService holder = LeaseFixture.service(holderPool, table);
                LeaseService next = LeaseFixture.service(db.newPool(1), table)) {
            Lease lease =
                    holder.tryAcquire("job", "holder", Duration.ofMillis(3000)).orElseThrow();
            try (Connection c = holderPool.getConnection()) {
                kill(db, sessionId(db, c));
            }
            assertThat(next.tryAcquire("job", "next", Duration.ofSeconds(30)))
                    .as("still live")
                    .isEmpty();

            Throwable failure = catchThrowable(() -> holder.release(lease));
            assertThat(failure).isInstanceOf(DatabaseException.class).hasMessageContaining("releasing lease 'job'");
            assertThat(holder.dialect().classify(failure)).isEqualTo(SqlErrorKind.CONNECTION_LOST);
            assertThat(next.find("job")).contains(lease);

            Lease taken = awaitGrant(next, "job", "next");
            assertThat(taken.token()).isEqualTo(lease.token() + 1);
            assertThat(taken.acquiredAt()).isAfterOrEqualTo(lease.expiresAt());
            // The holder's pool recovered; its late release is told the truth.
            assertThat(catchThrowable(() -> holder.release(lease))).isInstanceOf(LeaseExpiredException.class);
        }
    }

    /**
     * An acquire whose connection is killed while the statement runs (it waits on the row lock of
     * another transaction): a clear connection error, nothing granted, and the next acquirer, and the
     * same service afterwards, succeed.
     */
    @DatabaseTest(only = {TestDatabase.Kind.POSTGRESQL, TestDatabase.Kind.MARIADB})
    void poolLosesItsConnectionDuringAcquire(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService victim = LeaseFixture.service(db.newPool(1), table);
                LeaseService next = LeaseFixture.service(db.newPool(1), table)) {
            Lease old = next.tryAcquire("job", "old", Duration.ofSeconds(30)).orElseThrow();
            next.release(old);
            String before = LeaseFixture.dump(db, table);

            CompletableFuture<Optional<Lease>> attempt;
            try (Connection blocker = db.connection()) {
                blocker.setAutoCommit(false);
                try (PreparedStatement ps =
                        blocker.prepareStatement("SELECT token FROM " + table + " WHERE name = 'job' FOR UPDATE")) {
                    ps.executeQuery().close();
                }
                attempt =
                        CompletableFuture.supplyAsync(() -> victim.tryAcquire("job", "victim", Duration.ofSeconds(30)));
                long id = awaitBlockedSession(db, table);
                kill(db, id);
                Throwable failure = catchThrowable(() -> attempt.get(10, TimeUnit.SECONDS));
                assertThat(failure).isInstanceOf(ExecutionException.class);
                assertThat(failure.getCause())
                        .isInstanceOf(DatabaseException.class)
                        .hasMessageContaining("acquiring lease 'job' for 'victim'");
                assertThat(victim.dialect().classify(failure.getCause())).isEqualTo(SqlErrorKind.CONNECTION_LOST);
                blocker.rollback();
                blocker.setAutoCommit(true);
            }
            assertThat(LeaseFixture.dump(db, table)).as("nothing granted").isEqualTo(before);
            Lease taken = next.tryAcquire("job", "next", Duration.ofSeconds(30)).orElseThrow();
            assertThat(taken.token()).isEqualTo(old.token() + 1);
            next.release(taken);
            assertThat(victim.tryAcquire("job", "victim", Duration.ofSeconds(30)))
                    .as("the pool recovered")
                    .isPresent();
        }
    }

    /**
     * A kept-alive lease whose connection is killed mid-hold: the renewal that hits the dead
     * connection fails, the guard retries on a fresh connection within the TTL, and the lease is
     * never lost (connection loss is not lease loss).
     */
    @DatabaseTest(only = {TestDatabase.Kind.POSTGRESQL, TestDatabase.Kind.MARIADB})
    void keepAliveSurvivesAKilledConnection(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        HikariDataSource pool = db.newPool(1);
        AtomicReference<LeaseLostException> lost = new AtomicReference<>();
        try (LeaseService leases = LeaseFixture.service(pool, table);
                LeaseService other = LeaseFixture.service(db.newPool(1), table)) {
            Lease lease =
                    leases.tryAcquire("job", "holder", Duration.ofSeconds(3)).orElseThrow();
            try (LeaseGuard guard = leases.keepAlive(lease, Duration.ofSeconds(3), lost::set)) {
                for (int i = 0; i < 3; i++) {
                    try (Connection c = live(pool)) {
                        kill(db, sessionId(db, c));
                    }
                    Thread.sleep(500); // held a while: renewals run across the killed connection
                    assertThat(other.tryAcquire("job", "other", Duration.ofSeconds(1)))
                            .isEmpty();
                }
                assertThat(guard.isValid()).isTrue();
                assertThat(guard.token()).isEqualTo(lease.token());
            }
            assertThat(lost.get()).isNull();
            assertThat(Thread.interrupted()).isFalse();
            assertThat(other.find("job").orElseThrow().isReleased()).isTrue();
        }
    }

    /**
     * A live connection of the pool: the one killed last may still be in it (the pool skips its check
     * for a connection used within the last 500 ms); the test evicts it rather than race that window.
     * The guard's renewals get no such help.
     */
    private static Connection live(HikariDataSource pool) throws SQLException {
        for (int attempt = 0; attempt < 10; attempt++) {
            Connection c = pool.getConnection();
            if (c.isValid(2)) {
                return c;
            }
            pool.evictConnection(c);
        }
        throw new AssertionError("no live connection in the pool");
    }

    private static long awaitBlockedSession(TestDatabase db, String table) throws Exception {
        String sql = db.kind() == TestDatabase.Kind.POSTGRESQL
                ? "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO " + table
                        + "%'"
                : "SELECT id FROM information_schema.processlist WHERE info LIKE 'INSERT INTO " + table + "%'";
        return await("the acquire blocked on the row")
                .atMost(LeaseFixture.AT_MOST)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(10))
                .until(
                        () -> {
                            try (Connection c = db.connection();
                                    PreparedStatement ps = c.prepareStatement(sql);
                                    ResultSet rs = ps.executeQuery()) {
                                return rs.next() ? rs.getLong(1) : null;
                            }
                        },
                        java.util.Objects::nonNull);
    }

    static Lease awaitGrant(LeaseService leases, String name, String owner) {
        return await(name + " granted to " + owner)
                .atMost(LeaseFixture.AT_MOST)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(10))
                .until(
                        () -> leases.tryAcquire(name, owner, Duration.ofSeconds(30))
                                .orElse(null),
                        java.util.Objects::nonNull);
    }
}
