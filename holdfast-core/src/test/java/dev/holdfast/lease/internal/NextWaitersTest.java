package dev.holdfast.lease.internal;

import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * MariaDB: the release of a lease handed to a service hands it on to the waiter that service's wake-up connection
 * read as next right after the grant, without reading the queue again; a hint that no longer holds (the waiter
 * left, or it was read after another grant) costs only the read it saved, never a wrong hand-off.
 */
class NextWaitersTest {

    private static final long MINUTE_MICROS = 60_000_000L;

    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aReleaseHandsTheLeaseToTheWaiterReadAfterItsGrantAndChecksItStillComesFirst(TestDatabase db) throws Exception {
        String table = db.newTableName("lease");
        db.dropAfterTest(table + "_queue");
        new SchemaInstaller(db.dataSource()).install(HoldfastTable.LEASES, table);
        MariaDbLeaseStore jdbc = (MariaDbLeaseStore) LeaseStores.forDialect(Dialect.MARIADB, table);
        MariaDbLeaseSql sql = (MariaDbLeaseSql) jdbc.sql();
        NextWaiters hints = jdbc.handOffWakes().nextWaiters();
        List<String> ran = new CopyOnWriteArrayList<>();
        try (Connection plain = db.connection();
                Connection alive = unpooled(db)) {
            Connection c = recording(plain, ran);
            long live = takeLiveLock(alive);
            LeaseRow held = jdbc.acquire(c, "job", "a", MINUTE_MICROS, false).orElseThrow();
            queue(db, table, "waiter-x", "x", live);
            queue(db, table, "waiter-y", "y", live);

            QueuedWaiter next = MariaDbHandOff.nextWaiter(c, sql, "job", held.token());
            assertThat(next).isNotNull();
            assertThat(next.waiter()).isEqualTo("waiter-x");
            assertThat(next.leaseOwner()).isEqualTo("x");
            assertThat(next.listener()).isEqualTo(live);
            assertThat(MariaDbHandOff.nextWaiter(c, sql, "job", held.token() + 1))
                    .as("not that grant")
                    .isNull();

            hints.put("job", held.token() + 7, next);
            assertThat(hints.take("job", held.token()))
                    .as("read after another grant: not used")
                    .isNull();
            hints.put("job", held.token(), next);
            ran.clear();
            assertThat(jdbc.release(c, "job", "a", held.token(), false, null)).isTrue();
            assertThat(ran)
                    .as("the hand-off without a read of the queue")
                    .noneMatch(s -> s.startsWith("SELECT q.owner"))
                    .anyMatch(s -> s.startsWith("UPDATE " + table + " SET token = token + 1"));
            assertThat(db.queryString("SELECT handed_to FROM " + table)).isEqualTo("waiter-x");
            assertThat(db.queryLong("SELECT token FROM " + table)).isEqualTo(held.token() + 1);
            assertThat(hints.take("job", null)).as("taken").isNull();

            // x's grant: y is next, but y leaves before x's release, and z queued behind it is handed the lease.
            LeaseRow toX = jdbc.read(c, "job").orElseThrow();
            QueuedWaiter y = MariaDbHandOff.nextWaiter(c, sql, "job", toX.token());
            assertThat(y).isNotNull();
            assertThat(y.waiter()).isEqualTo("waiter-y");
            hints.put("job", toX.token(), y);
            queue(db, table, "waiter-z", "z", live);
            jdbc.giveUp(c, "job", "waiter-y", false);
            ran.clear();
            assertThat(jdbc.release(c, "job", "x", toX.token(), false, null)).isTrue();
            assertThat(ran)
                    .as("the hint's update matched nothing: the queue is read, and z handed the lease")
                    .filteredOn(s -> s.startsWith("SELECT q.owner") || s.startsWith("UPDATE " + table + " SET token"))
                    .hasSize(3);
            assertThat(db.queryString("SELECT handed_to FROM " + table)).isEqualTo("waiter-z");
            assertThat(db.queryString("SELECT owner FROM " + table)).isEqualTo("z");
            assertThat(db.queryLong("SELECT token FROM " + table)).isEqualTo(toX.token() + 1);
        }
    }

    /** A connection whose prepared statements' SQL goes to {@code ran}. */
    private static Connection recording(Connection c, List<String> ran) {
        return (Connection) Proxy.newProxyInstance(
                NextWaitersTest.class.getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                    if (method.getName().equals("prepareStatement")) {
                        ran.add((String) args[0]);
                    }
                    try {
                        return method.invoke(c, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    private static Connection unpooled(TestDatabase db) throws SQLException {
        return DriverManager.getConnection(
                db.kind().url(), db.kind().user(), db.kind().password());
    }

    private static long takeLiveLock(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(MariaDbLeaseSql.LIVE_LOCK);
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            assertThat(rs.getLong(1)).isOne();
            return rs.getLong(2);
        }
    }

    /** A live entry 1 ms after the last one, and the lease row marked as a refused attempt marks it. */
    private static void queue(TestDatabase db, String table, String waiter, String owner, long listener)
            throws SQLException {
        db.execute("UPDATE " + table + " SET waiters_until = UTC_TIMESTAMP(6) + INTERVAL 61 SECOND WHERE name = 'job'");
        db.execute(
                "INSERT INTO " + table
                        + "_queue (name, owner, queued_at, wait_until, lease_owner, ttl_micros, listener)"
                        + " SELECT 'job', ?, COALESCE(MAX(queued_at), UTC_TIMESTAMP(6)) + INTERVAL 1000 MICROSECOND,"
                        + " UTC_TIMESTAMP(6) + INTERVAL 1 MINUTE, ?, 42000000, ? FROM " + table + "_queue",
                waiter,
                owner,
                listener);
    }
}
