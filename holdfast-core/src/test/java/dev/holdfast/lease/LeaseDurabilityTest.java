package dev.holdfast.lease;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
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
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Grants, renewals and token reservations are durable whatever the session says: on PostgreSQL the
 * acquire, renew, reserve and queueing statements force {@code synchronous_commit} to at least {@code on} for their own
 * transaction (a stronger setting is kept), and the session keeps its own setting afterwards.
 */
class LeaseDurabilityTest {

    /** Session setting → the setting the statement's own transaction must commit with. */
    private static final Map<String, String> EXPECTED = Map.of(
            "off", "on", "local", "on", "on", "on", "remote_write", "remote_write", "remote_apply", "remote_apply");

    private interface Statement1 {
        void run(Connection c, LeaseStore sql, String name) throws SQLException;
    }

    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void acquireRenewAndQueueCommitDurablyAndLeaveTheSessionAsItWas(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        LeaseStore sql = LeaseStores.forDialect(Dialect.POSTGRESQL, table);
        long ttl = 60_000_000;
        try (Connection listener = LeaseFixture.listener(db)) {
            int listenerPid = pid(listener);
            checkEachStatementInEachSession(db, table, sql, ttl, listenerPid);
        }
    }

    private static void checkEachStatementInEachSession(
            TestDatabase db, String table, LeaseStore sql, long ttl, int listenerPid) throws SQLException {
        Map<String, Statement1> statements = Map.of(
                "acquire",
                        (c, s, n) ->
                                assertThat(s.acquire(c, n, "a", ttl, false)).isPresent(),
                "tryLock",
                        (c, s, n) -> assertThat(s.acquire(c, n, "a", ttl, true)).isPresent(),
                "acquireOrQueue",
                        (c, s, n) -> assertThat(s.acquireOrQueue(c, n, "a", "waiter-a", ttl, 2_000_000, false, null))
                                .isPresent(),
                // A release that hands the lease to a waiter grants it: durable. (Inside a transaction, as
                // here, a release is never fast; in auto-commit mode the hand-off is a transaction of its own.)
                "handOff",
                        (c, s, n) -> {
                            LeaseRow l = granted(db, table, n);
                            queueWaiter(db, table, n, "waiter-b", "b", listenerPid);
                            assertThat(s.release(c, n, "a", l.token(), false, null))
                                    .isTrue();
                            try (PreparedStatement ps =
                                    c.prepareStatement("SELECT owner, handed_to FROM " + table + " WHERE name = ?")) {
                                ps.setString(1, n);
                                try (ResultSet rs = ps.executeQuery()) {
                                    assertThat(rs.next()).isTrue();
                                    assertThat(rs.getString(1) + "/" + rs.getString(2))
                                            .isEqualTo("b/waiter-b");
                                }
                            }
                        },
                "renew",
                        (c, s, n) -> {
                            LeaseRow l = granted(db, table, n);
                            assertThat(s.renew(c, n, "a", l.token(), ttl)).isPresent();
                        },
                // The tokens a cohort hand-off reserves must never be handed out again after a crash.
                "reserve",
                        (c, s, n) -> {
                            LeaseRow l = granted(db, table, n);
                            assertThat(s.reserve(c, n, "a", l.token(), 8, ttl)
                                            .orElseThrow()
                                            .token())
                                    .isEqualTo(l.token() + 8);
                        });
        try (HikariDataSource pool = db.newPool(1)) {
            int i = 0;
            for (var session : EXPECTED.entrySet()) {
                for (var statement : statements.entrySet()) {
                    String name = "job-" + i++;
                    try (Connection c = pool.getConnection()) {
                        set(c, session.getKey());
                        c.setAutoCommit(false);
                        statement.getValue().run(c, sql, name);
                        assertThat(setting(c))
                                .as(statement.getKey() + " in a session with " + session.getKey())
                                .isEqualTo(session.getValue());
                        c.commit();
                        c.setAutoCommit(true);
                        assertThat(setting(c))
                                .as("the session after " + statement.getKey())
                                .isEqualTo(session.getKey());
                        set(c, "on");
                    }
                }
            }
        }
    }

    /** The whole service on a pool whose sessions run with {@code synchronous_commit = off}: works, and leaves them so. */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void aPoolConfiguredAsynchronousStaysSoAndTheServiceWorks(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(db.kind().url());
        config.setUsername(db.kind().user());
        config.setPassword(db.kind().password());
        config.setMaximumPoolSize(2);
        config.setConnectionInitSql("SET synchronous_commit = off");
        try (HikariDataSource pool = new HikariDataSource(config);
                LeaseService leases = LeaseService.builder(pool).table(table).build()) {
            Lease lease = leases.tryAcquire("job", "a", Duration.ofSeconds(30)).orElseThrow();
            lease = leases.renew(lease, Duration.ofSeconds(30));
            try (LeaseGuard guard = leases.keepAlive(lease, Duration.ofSeconds(30), null)) {
                guard.checkValid();
            }
            Lease again = leases.acquire("job", "a", Duration.ofSeconds(30), Duration.ofSeconds(5));
            leases.release(again);
            for (int i = 0; i < 2; i++) {
                try (Connection c = pool.getConnection()) {
                    assertThat(setting(c)).isEqualTo("off");
                }
            }
        }
    }

    private static LeaseRow granted(TestDatabase db, String table, String name) throws SQLException {
        try (Connection c = db.connection()) {
            return LeaseStores.forDialect(Dialect.POSTGRESQL, table)
                    .acquire(c, name, "a", 60_000_000, false)
                    .orElseThrow();
        }
    }

    /** Queues a waiter as a {@code lock} call of {@code owner} does, its notifications delivered by backend {@code listener}. */
    static void queueWaiter(TestDatabase db, String table, String name, String waiter, String owner, int listener)
            throws SQLException {
        db.execute(
                "INSERT INTO " + table + "_queue (name, owner, wait_until, lease_owner, ttl_micros, listener)"
                        + " VALUES (?, ?, clock_timestamp() + interval '1 minute', ?, 60000000, ?)",
                name,
                waiter,
                owner,
                listener);
        // As a queued attempt does: the lease row says that someone waits.
        db.execute(
                "UPDATE " + table + " SET waiters_until = clock_timestamp() + interval '1 minute' WHERE name = ?",
                name);
    }

    static int pid(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    private static void set(Connection c, String value) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("SET synchronous_commit = " + value);
        }
    }

    static String setting(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT current_setting('synchronous_commit')");
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getString(1);
        }
    }
}
