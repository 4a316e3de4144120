package dev.holdfast.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.PoolingModeException;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.pessimistic.LockTimeoutException;
import dev.holdfast.pessimistic.LockWait;
import dev.holdfast.pessimistic.PessimisticLocks;
import dev.holdfast.pessimistic.RowRef;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;

import static dev.holdfast.lease.LeaseInternals.probe;
import static dev.holdfast.lease.LeaseInternals.tune;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Holdfast behind PgBouncer, on every PostgreSQL entry of the matrix (direct, {@code pgbouncer} in
 * transaction mode, {@code pgbouncer_session}), so each property is shown where it holds trivially
 * too. Two clients take turns on one server connection: through PgBouncer, two client connections to
 * its one-connection pool {@code test_single} ({@code HOLDFAST_PGBOUNCER_SINGLE_URL}); otherwise two
 * borrowers of one pooled connection.
 */
class PgBouncerTest {

    private static final String SINGLE_URL = "jdbc:postgresql://127.0.0.1:6432/test_single?prepareThreshold=0";

    /** Settings a Holdfast call may change inside its transaction; the next client must see the server's defaults. */
    private static final String SETTINGS = "SELECT pg_backend_pid(), current_setting('lock_timeout'),"
            + " current_setting('statement_timeout'), current_setting('synchronous_commit'),"
            + " current_setting('default_transaction_isolation'), current_setting('transaction_isolation'),"
            + " current_setting('holdfast.saved_lock_timeout', true), current_setting('holdfast.released', true),"
            + " (SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory'),"
            + " array_to_string(ARRAY(SELECT pg_listening_channels()), ',')";

    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void boundsAndDurabilityNeverReachTheNextClientOfOneServerConnection(TestDatabase db) throws Exception {
        String orders = db.newTableName("bouncer_orders");
        db.execute("CREATE TABLE " + orders + " (id INT PRIMARY KEY, note VARCHAR(20))");
        db.execute("INSERT INTO " + orders + " VALUES (1, 'a')");
        String leaseTable = install(db, HoldfastTable.LEASES, "bouncer_leases");
        db.dropAfterTest(leaseTable + "_queue");
        String lockTable = install(db, HoldfastTable.OFFLINE_LOCKS, "bouncer_locks");
        try (OneServer server = OneServer.of(db)) {
            List<String> defaults = settings(server.b);

            // 1. A bounded row lock, its transaction open while B waits for the one server connection
            PessimisticLocks locks = PessimisticLocks.of(server.a);
            CompletableFuture<List<String>> b;
            try (Connection a = server.a.getConnection()) {
                a.setAutoCommit(false);
                locks.forUpdate(a, RowRef.of(orders, "id", 1), LockWait.atMost(Duration.ofSeconds(3)));
                try (Statement s = a.createStatement()) {
                    s.execute("SET LOCAL synchronous_commit = off"); // as a relaxed commit does, the user's own
                }
                assertThat(settings(a).get(0))
                        .as("A holds the one server connection")
                        .isEqualTo(defaults.get(0));
                b = CompletableFuture.supplyAsync(() -> settingsUnchecked(server.b));
                await().atMost(Duration.ofSeconds(30)).until(server.bWaits::getAsBoolean);
                assertThat(b).as("B waits for A's transaction").isNotDone();
                a.commit();
            } // through PgBouncer the commit frees the server connection; a pool's connection, the close
            assertThat(b.get(30, TimeUnit.SECONDS))
                    .as("B after A's bounded lock")
                    .isEqualTo(defaults);

            // 2. A bound that runs out: the error path restores too
            try (Connection blocker = db.directDataSource().getConnection()) {
                blocker.setAutoCommit(false);
                try (Statement s = blocker.createStatement()) {
                    s.execute("SELECT * FROM " + orders + " WHERE id = 1 FOR UPDATE");
                }
                try (Connection a = server.a.getConnection()) {
                    a.setAutoCommit(false);
                    assertThatThrownBy(() -> locks.forUpdate(
                                    a, RowRef.of(orders, "id", 1), LockWait.atMost(Duration.ofMillis(200))))
                            .isInstanceOf(LockTimeoutException.class);
                }
                blocker.rollback();
            }
            assertThat(settings(server.b)).as("B after A's lock timed out").isEqualTo(defaults);

            // 3. Leases: durable grants raise synchronous_commit, fast releases lower it, each in its own transaction
            try (LeaseService leases =
                    LeaseService.builder(server.a).table(leaseTable).build()) {
                Lease lease =
                        leases.tryAcquire("report", "a", Duration.ofMinutes(1)).orElseThrow();
                assertThat(settings(server.b)).as("B after A's grant").isEqualTo(defaults);
                leases.release(lease);
                assertThat(settings(server.b)).as("B after A's fast release").isEqualTo(defaults);
            }

            // 4. Offline locks, relaxed and durable
            for (CommitDurability durability : CommitDurability.values()) {
                JdbcLockManager editLocks = JdbcLockManager.builder(server.a)
                        .table(lockTable)
                        .durability(durability)
                        .build();
                LockId id = editLocks.tryLock("order", "1", "kim");
                assertThat(settings(server.b))
                        .as("B after A's " + durability + " lock")
                        .isEqualTo(defaults);
                editLocks.releaseLock(id, "kim");
                assertThat(settings(server.b))
                        .as("B after A's " + durability + " release")
                        .isEqualTo(defaults);
            }
        }
    }

    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void serverSidePreparedStatementsFailAtOnceAndSayWhatToChange(TestDatabase db) throws Exception {
        String table = install(db, HoldfastTable.LEASES, "bouncer_prepared");
        db.dropAfterTest(table + "_queue");
        // pgjdbc's default prepareThreshold (5): the fifth run of a statement names it on the server
        try (OneServer server = OneServer.of(db, url -> url.replace("?prepareThreshold=0", ""));
                LeaseService a = LeaseService.builder(server.a).table(table).build();
                LeaseService b = LeaseService.builder(server.b).table(table).build()) {
            // Each client runs one statement six times, on names of its own. Through the transaction pooler
            // the two share one server connection, which may also keep statements of an earlier run.
            List<RuntimeException> failures = new ArrayList<>();
            for (LeaseService client : List.of(a, b)) {
                String prefix = client == a ? "a-" : "b-";
                for (int i = 0; i < 6; i++) {
                    try {
                        assertThat(client.tryAcquire(prefix + i, "owner", Duration.ofMinutes(1)))
                                .isPresent();
                    } catch (RuntimeException e) {
                        failures.add(e);
                        assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + " WHERE name = ?", prefix + i))
                                .as("the failed grant changed nothing")
                                .isZero();
                    }
                }
            }
            if (db.entry() == TestDatabase.Entry.PGBOUNCER) {
                assertThat(failures)
                        .as("a statement named like another on their one server connection")
                        .isNotEmpty();
                assertThat(failures.get(0))
                        .isInstanceOf(PoolingModeException.class)
                        .hasMessageContaining("add prepareThreshold=0 to the JDBC URL");
                assertThat(((PoolingModeException) failures.get(0))
                                .sqlException()
                                .getSQLState())
                        .isIn("26000", "42P05");
            } else {
                assertThat(failures)
                        .as("a connection that keeps its server keeps its statements")
                        .isEmpty();
            }
        }
    }

    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void leaseWaitersPollBehindATransactionPoolerAndListenOnADirectConnection(TestDatabase db) throws Exception {
        String table = install(db, HoldfastTable.LEASES, "bouncer_wakeups");
        db.dropAfterTest(table + "_queue");
        boolean transactionPooled = db.entry() == TestDatabase.Entry.PGBOUNCER;
        try (LeaseService holder =
                        LeaseService.builder(db.dataSource()).table(table).build();
                LeaseService pooled = tune(
                                LeaseService.builder(db.dataSource()).table(table),
                                t -> t.notifyProbe(Duration.ofMillis(500)))
                        .build();
                LeaseService direct = tune(
                                LeaseService.builder(db.dataSource())
                                        .table(table)
                                        .listenerDataSource(db.directDataSource()),
                                t -> t.safetyPoll(Duration.ofMinutes(1)))
                        .build()) { // only the notice wakes its waiter in time
            // Through the service's own pool: behind a transaction pooler the listener's probe is not
            // heard, so its waiters poll (logged); anywhere else it listens.
            Lease held =
                    holder.tryAcquire("job", "holder", Duration.ofMinutes(1)).orElseThrow();
            CompletableFuture<Lease> waiting = async(pooled, "job", "waiter");
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> probe(pooled).listening() || probe(pooled).listenerBehindPooler());
            assertThat(probe(pooled).listenerBehindPooler()).isEqualTo(transactionPooled);
            assertThat(probe(pooled).listening()).isEqualTo(!transactionPooled);
            holder.release(held);
            Lease got = waiting.get(30, TimeUnit.SECONDS);
            assertThat(got.token()).isGreaterThan(held.token());
            pooled.release(got);

            // With a listener on a direct connection, the release hands the lease over and notifies.
            held = holder.tryAcquire("job", "holder", Duration.ofMinutes(1)).orElseThrow();
            waiting = async(direct, "job", "waiter");
            await().atMost(Duration.ofSeconds(30)).until(() -> probe(direct).listening());
            awaitQueued(db, table);
            awaitAsleepUntilNotified();
            holder.release(held);
            got = waiting.get(30, TimeUnit.SECONDS);
            assertThat(probe(direct).handOffsReceived())
                    .as("woken by the hand-off's notification")
                    .isEqualTo(1);
            direct.release(got);
        }
    }

    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void theReadmesListenerSettingBuildsAServiceWhoseWaitersAreNotified(TestDatabase db) throws Exception {
        String leaseTable = install(db, HoldfastTable.LEASES, "bouncer_readme");
        db.dropAfterTest(leaseTable + "_queue");
        DataSource pooledThroughPgBouncer = db.dataSource();
        DataSource directToPostgresql = db.directDataSource();
        // tag::pgbouncer-listener[]
        LeaseService leases = LeaseService.builder(pooledThroughPgBouncer)  // ...:6432/app?prepareThreshold=0
                .table(leaseTable)
                .listenerDataSource(directToPostgresql)    // its LISTEN connection bypasses the pooler
                .build();
        // end::pgbouncer-listener[]
        try (leases) {
            Lease held = leases.tryAcquire("job", "a", Duration.ofMinutes(1)).orElseThrow();
            CompletableFuture<Lease> waiting = async(leases, "job", "b");
            await().atMost(Duration.ofSeconds(30)).until(() -> probe(leases).listening());
            awaitQueued(db, leaseTable);
            awaitAsleepUntilNotified();
            leases.release(held);
            Lease handedOn = waiting.get(30, TimeUnit.SECONDS);
            assertThat(handedOn.token()).as("handed on by the release").isEqualTo(held.token() + 1);
            // The waiter may take its grant from the notice or, on a busy machine, from a safety poll that came first;
            // either way the release's notice reaches the listener that listens on the direct connection.
            await("the hand-off's notice heard")
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> probe(leases).handOffNotificationsHeard() == 1);
            leases.release(handedOn);
        }
    }

    private static CompletableFuture<Lease> async(LeaseService leases, String name, String owner) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return leases.acquire(name, owner, Duration.ofMinutes(1), Duration.ofSeconds(60));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        });
    }

    /**
     * Until a blocking call sleeps until notified, its attempt done: a queue entry naming the listener does not say
     * that the attempt that wrote it has returned (one still in flight finds a hand-off itself, without the notice).
     */
    private static void awaitAsleepUntilNotified() {
        await("a waiting call asleep until notified")
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(5))
                .until(() -> Thread.getAllStackTraces().entrySet().stream()
                        .anyMatch(e -> e.getKey().getState() == Thread.State.TIMED_WAITING
                                && java.util.Arrays.stream(e.getValue())
                                        .anyMatch(f -> f.getMethodName().equals("acquireInDatabase"))
                                && java.util.Arrays.stream(e.getValue())
                                        .anyMatch(f -> f.getClassName().equals("java.util.concurrent.Semaphore")
                                                && f.getMethodName().equals("tryAcquire"))));
    }

    /** Until a waiter's queue entry names a listener: a release will hand it the lease and notify it. */
    private static void awaitQueued(TestDatabase db, String table) {
        await().atMost(Duration.ofSeconds(30))
                .until(() -> db.queryLong("SELECT COUNT(*) FROM " + table + "_queue WHERE listener IS NOT NULL") == 1);
    }

    private static String install(TestDatabase db, HoldfastTable kind, String prefix) {
        String table = db.newTableName(prefix);
        new SchemaInstaller(db.dataSource()).install(kind, table);
        return table;
    }

    private static List<String> settings(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection()) {
            return settings(c);
        }
    }

    private static List<String> settingsUnchecked(DataSource ds) {
        try {
            return settings(ds);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static List<String> settings(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(SETTINGS)) {
            rs.next();
            List<String> values = new ArrayList<>(); // nulls too: a custom setting never set
            for (int i = 1; i <= 10; i++) {
                String value = rs.getString(i);
                // a custom setting once set transaction-locally reads '' afterwards in that session: unset too
                values.add((i == 7 || i == 8) && "".equals(value) ? null : value);
            }
            return values;
        }
    }

    /**
     * Two clients, {@code a} and {@code b}, that take turns on one server connection, and how to
     * tell that {@code b} waits for it.
     */
    private static final class OneServer implements AutoCloseable {
        final DataSource a;
        final DataSource b;
        final BooleanSupplier bWaits;
        private final List<HikariDataSource> pools;

        private OneServer(DataSource a, DataSource b, BooleanSupplier bWaits, List<HikariDataSource> pools) {
            this.a = a;
            this.b = b;
            this.bWaits = bWaits;
            this.pools = pools;
        }

        static OneServer of(TestDatabase db) {
            return of(db, url -> url);
        }

        static OneServer of(TestDatabase db, java.util.function.UnaryOperator<String> url) {
            if (db.entry() == TestDatabase.Entry.PGBOUNCER) {
                String single = url.apply(System.getenv().getOrDefault("HOLDFAST_PGBOUNCER_SINGLE_URL", SINGLE_URL));
                String user = db.entry().user();
                String password = db.entry().password();
                HikariDataSource a = pool(single, user, password);
                HikariDataSource b = pool(single, user, password);
                // PgBouncer's admin console (SHOW POOLS) refuses pgjdbc's start-up SET: B is not seen
                // queued; it runs after A's transaction either way, on the one server connection.
                return new OneServer(a, b, () -> true, List.of(a, b));
            }
            String shared = url.apply(db.entry().url());
            HikariDataSource one = pool(shared, db.entry().user(), db.entry().password());
            return new OneServer(
                    one, one, () -> one.getHikariPoolMXBean().getThreadsAwaitingConnection() > 0, List.of(one));
        }

        private static HikariDataSource pool(String url, String user, String password) {
            HikariConfig config = new HikariConfig();
            config.setJdbcUrl(url);
            config.setUsername(user);
            config.setPassword(password);
            config.setMaximumPoolSize(1);
            config.setMinimumIdle(0);
            config.setConnectionTimeout(TimeUnit.SECONDS.toMillis(60));
            return new HikariDataSource(config);
        }

        @Override
        public void close() {
            pools.forEach(HikariDataSource::close);
        }
    }
}
