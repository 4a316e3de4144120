package dev.holdfast.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.lease.internal.PgLeaseSql;
import dev.holdfast.testing.TestDatabase;
import org.awaitility.core.ConditionTimeoutException;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

import static org.awaitility.Awaitility.await;

/** Shared set-up of the lease tests: a fresh lease table per test, dropped afterwards. */
final class LeaseFixture {

    private LeaseFixture() {}

    /** Installs a new lease table and its waiter queue and returns the table's name. */
    static String install(TestDatabase db) {
        String table = db.newTableName("lease");
        db.dropAfterTest(table + "_queue");
        new SchemaInstaller(db.dataSource()).install(HoldfastTable.LEASES, table);
        return table;
    }

    /**
     * PostgreSQL: a connection of its own (unpooled: closing it ends its backend) that says it is
     * alive as a listening service's listener does, holding {@link PgLeaseSql#LISTENER_LOCK};
     * its pid goes into a queue entry as that waiter's listener.
     */
    static Connection listener(TestDatabase db) throws SQLException {
        Connection c = unpooled(db);
        try (Statement s = c.createStatement();
                var rs = s.executeQuery(PgLeaseSql.LISTENER_LOCK)) {
            if (!rs.next() || !rs.getBoolean(1)) {
                throw new IllegalStateException("the listener's lock is taken");
            }
        } catch (SQLException | RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    /** A connection outside every pool: closing it ends its backend. */
    static Connection unpooled(TestDatabase db) throws SQLException {
        return DriverManager.getConnection(
                db.kind().url(), db.kind().user(), db.kind().password());
    }

    static LeaseService service(DataSource ds, String table) {
        return LeaseService.builder(ds).table(table).build();
    }

    /**
     * The pool a test's listener connects from, whose connections (and pids) the test watches:
     * through PgBouncer in transaction mode a direct pool, which {@link #withListenerPool} gives the
     * listener alone; elsewhere the service's own pool.
     */
    static HikariDataSource listenerPool(TestDatabase db, int maxSize) {
        return db.entry() == TestDatabase.Entry.PGBOUNCER ? db.newDirectPool(maxSize) : db.newPool(maxSize);
    }

    /** A builder whose listener connects from {@code listenerPool} ({@link #listenerPool}). */
    static LeaseService.Builder withListenerPool(TestDatabase db, DataSource listenerPool) {
        return db.entry() == TestDatabase.Entry.PGBOUNCER
                ? LeaseService.builder(db.newPool(2)).listenerDataSource(listenerPool)
                : LeaseService.builder(listenerPool);
    }

    /** {@link #builder}'s service on {@code table}. */
    static LeaseService service(TestDatabase db, DataSource ds, String table) {
        return builder(db, ds).table(table).build();
    }

    /**
     * A builder on {@code ds} configured as the README says for where the test runs: through PgBouncer
     * in transaction mode, the listener gets a direct connection ({@code listenerDataSource}), as
     * {@code LISTEN} does not survive the pooler; elsewhere nothing is added.
     */
    static LeaseService.Builder builder(TestDatabase db, DataSource ds) {
        LeaseService.Builder builder = LeaseService.builder(ds);
        // a pool of its own per service, as each instance of an application would have
        return db.entry() == TestDatabase.Entry.PGBOUNCER ? builder.listenerDataSource(db.newDirectPool(2)) : builder;
    }

    /** How long a test waits for something that takes milliseconds, on a saturated machine. */
    static final Duration AT_MOST = Duration.ofSeconds(30);

    /** Waits until the waiter queue of {@code table} holds {@code entries} entries. */
    static void awaitQueued(TestDatabase db, String table, long entries) {
        await("the waiter queue of " + table + " holding " + entries + " entries")
                .atMost(AT_MOST)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(10))
                .until(() -> db.queryLong("SELECT COUNT(*) FROM " + table + "_queue") == entries);
    }

    /**
     * Waits, at most {@link #AT_MOST}, until {@code latch} is open, on a thread a guard (or a closing
     * service) may interrupt meanwhile: an interrupt is expected, swallowed, and the wait goes on.
     *
     * @return whether the latch opened
     */
    static boolean awaitIgnoringInterrupts(CountDownLatch latch) {
        long end = System.nanoTime() + AT_MOST.toNanos();
        while (latch.getCount() > 0 && System.nanoTime() - end < 0) {
            try {
                latch.await(end - System.nanoTime(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                // expected: keep waiting
            }
        }
        return latch.getCount() == 0;
    }

    /**
     * Waits until {@code condition} holds, asking every {@code poll}, at most {@code bound}: whether it
     * held within the bound (for a condition that should come true while a fault still lasts, or one
     * a test reports on rather than fails by).
     */
    static boolean holdsWithin(Duration bound, Duration poll, Callable<Boolean> condition) {
        try {
            await().atMost(bound).pollDelay(Duration.ZERO).pollInterval(poll).until(condition);
            return true;
        } catch (ConditionTimeoutException e) {
            return false;
        }
    }

    /** MariaDB: waits until {@code entries} queue entries have published their service's wake-up connection. */
    static void awaitPublished(TestDatabase db, String table, long entries) {
        await("entries with their wake-up connection")
                .atMost(AT_MOST)
                .pollInterval(Duration.ofMillis(5))
                .until(() ->
                        db.queryLong("SELECT COUNT(*) FROM " + table + "_queue WHERE listener IS NOT NULL") == entries);
    }

    /**
     * PostgreSQL: waits until a waiter queued with its listener, so that a release hands the lease to
     * it (a waiter whose listener is not up yet polls, and may take a free lease by its own attempt).
     */
    static void awaitListenedEntry(TestDatabase db, String table) {
        await("a waiter queued with its listener in " + table)
                .atMost(AT_MOST)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(10))
                .until(() -> db.queryLong("SELECT COUNT(*) FROM " + table + "_queue WHERE listener IS NOT NULL") >= 1);
    }

    /**
     * Starts the PostgreSQL listener of {@code leases} and waits until it listens: one blocking call for
     * {@code heldName} (held by someone else) that gives up at once.
     */
    static void startListener(LeaseService leases, String heldName) {
        try {
            leases.acquire(heldName, "listener-start", Duration.ofSeconds(1), Duration.ofMillis(1));
            throw new AssertionError(heldName + " was free: the listener is started by a call that waits");
        } catch (LeaseTimeoutException expected) {
            // the wait started the listener
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        await("the listener listening")
                .atMost(AT_MOST)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(10))
                .until(() -> leases.probe().listening());
    }

    /** Calls {@link LeaseService#acquire} on a thread of its own ({@code test-lock-<owner>}); its outcome. */
    static CompletableFuture<Lease> lockAsync(
            LeaseService leases, String name, String owner, Duration ttl, Duration wait) {
        CompletableFuture<Lease> result = new CompletableFuture<>();
        Thread t = new Thread(
                () -> {
                    try {
                        result.complete(leases.acquire(name, owner, ttl, wait));
                    } catch (Throwable e) {
                        result.completeExceptionally(e);
                    }
                },
                "test-lock-" + owner);
        t.start();
        return result;
    }

    /**
     * MariaDB: waits until the {@link #lockAsync} call of {@code owner} sleeps until a wake-up, its attempt done: a
     * published queue entry alone does not say that the attempt that published it has returned (one still in flight
     * would find a hand-off itself, and take it without the wake-up). Asleep: parked until woken, or in the watch it
     * runs itself on its service's wake-up connection (a kill ends it, and a hand-off before it is found by it).
     */
    static void awaitAsleepUntilWoken(String owner) {
        await("the call of " + owner + " asleep until woken")
                .atMost(AT_MOST)
                .pollInterval(Duration.ofMillis(5))
                .until(() -> Thread.getAllStackTraces().entrySet().stream()
                        .anyMatch(e -> e.getKey().getName().equals("test-lock-" + owner)
                                && java.util.Arrays.stream(e.getValue())
                                        .anyMatch(f -> f.getMethodName().equals("awaitPoll")
                                                && f.getClassName().endsWith("MariaDbWakeUps"))
                                && (e.getKey().getState() == Thread.State.TIMED_WAITING || inWatch(e.getValue()))));
    }

    /** MariaDB: whether the thread named {@code thread} runs a wake-up connection's watch now. */
    static boolean watches(String thread) {
        return Thread.getAllStackTraces().entrySet().stream()
                .anyMatch(e -> e.getKey().getName().equals(thread) && inWatch(e.getValue()));
    }

    private static boolean inWatch(StackTraceElement[] stack) {
        return java.util.Arrays.stream(stack)
                .anyMatch(f ->
                        f.getMethodName().equals("watch") && f.getClassName().endsWith("MariaDbHandOff"));
    }

    static long rows(TestDatabase db, String table) throws SQLException {
        return db.queryLong("SELECT COUNT(*) FROM " + table);
    }

    /** The full contents of a lease table, for "nothing changed" assertions. */
    static String dump(TestDatabase db, String table) throws SQLException {
        StringBuilder out = new StringBuilder();
        try (Connection c = db.connection();
                Statement s = c.createStatement();
                var rs = s.executeQuery(
                        "SELECT name, owner, token, acquired_at, expires_at FROM " + table + " ORDER BY name")) {
            while (rs.next()) {
                out.append(rs.getString(1))
                        .append('|')
                        .append(rs.getString(2))
                        .append('|')
                        .append(rs.getLong(3))
                        .append('|')
                        .append(rs.getString(4))
                        .append('|')
                        .append(rs.getString(5))
                        .append('\n');
            }
        }
        return out.toString();
    }

    /**
     * A data source whose connections run {@code sql} when borrowed: a "server" configured
     * differently (another session time zone, {@code synchronous_commit = off}) on the same database.
     */
    static DataSource withSessionSetting(DataSource target, String sql) {
        return (DataSource) Proxy.newProxyInstance(
                LeaseFixture.class.getClassLoader(), new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    try {
                        Object result = method.invoke(target, args);
                        if (result instanceof Connection c && method.getName().equals("getConnection")) {
                            try (Statement s = c.createStatement()) {
                                s.execute(sql);
                            }
                        }
                        return result;
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    /** A data source whose connections add every statement they prepare to {@code prepared}. */
    static DataSource recordingStatements(DataSource target, List<String> prepared) {
        ClassLoader loader = LeaseFixture.class.getClassLoader();
        return (DataSource) Proxy.newProxyInstance(loader, new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
            Object result = invoke(target, method, args);
            if (result instanceof Connection c) {
                return Proxy.newProxyInstance(loader, new Class<?>[] {Connection.class}, (p2, m2, args2) -> {
                    if (m2.getName().equals("prepareStatement")) {
                        prepared.add((String) args2[0]);
                    }
                    return invoke(c, m2, args2);
                });
            }
            return result;
        });
    }

    /** What a test does when a prepared statement executes: {@code statement} runs it (or not), to stall or fail it. */
    @FunctionalInterface
    interface StatementHook {
        Object execute(String sql, Callable<Object> statement) throws Exception;
    }

    /** A data source whose prepared statements execute through {@code hook}. */
    static DataSource hooked(DataSource target, StatementHook hook) {
        ClassLoader loader = LeaseFixture.class.getClassLoader();
        return (DataSource) Proxy.newProxyInstance(loader, new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
            Object result = invoke(target, method, args);
            if (!(result instanceof Connection c)) {
                return result;
            }
            return Proxy.newProxyInstance(loader, new Class<?>[] {Connection.class}, (p2, m2, args2) -> {
                Object made = invoke(c, m2, args2);
                if (!(made instanceof PreparedStatement ps)) {
                    return made;
                }
                String sql = (String) args2[0];
                return Proxy.newProxyInstance(
                        loader,
                        new Class<?>[] {PreparedStatement.class},
                        (p3, m3, args3) -> m3.getName().startsWith("execute") && (args3 == null || args3.length == 0)
                                ? hook.execute(sql, () -> invokeChecked(ps, m3, args3))
                                : invoke(ps, m3, args3));
            });
        });
    }

    private static Object invokeChecked(Object target, java.lang.reflect.Method method, Object[] args)
            throws Exception {
        try {
            return invoke(target, method, args);
        } catch (Exception | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    static String timeZoneSql(TestDatabase db, String zone) {
        return switch (db.kind()) {
            case H2 -> "SET TIME ZONE '" + zone + "'";
            case POSTGRESQL -> "SET TIME ZONE '" + zone + "'";
            case MARIADB -> "SET time_zone = '" + zone + "'";
        };
    }
}
