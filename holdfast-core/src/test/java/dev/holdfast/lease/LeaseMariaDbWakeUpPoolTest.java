package dev.holdfast.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.jdbc.ConnectionPool;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * How a MariaDB service's wake-up connections leave the pool ({@link ConnectionPool}): each handed to the pool to
 * retire exactly once, their sessions ended; and a pool too small for them said so once, at WARNING, with the size
 * to set.
 */
class LeaseMariaDbWakeUpPoolTest {

    private static final Duration LONG = Duration.ofSeconds(30);
    /** The wake-ups' logger, held here so that JUL keeps the handler added to it. */
    private static final Logger WAKE_UPS = Logger.getLogger("dev.holdfast.lease.internal.MariaDbWakeUps");

    // tag::hikari-connection-pool[]
    /** HikariCP: the wake-ups' connections are evicted (no "marked as broken" warning), and the pool's size is known. */
    static final class HikariConnections implements ConnectionPool {
        private final HikariDataSource hikari;

        HikariConnections(HikariDataSource hikari) {
            this.hikari = hikari;
        }

        @Override
        public void retire(Connection connection) throws SQLException {
            hikari.evictConnection(connection); // the pool closes it: its session ends, and it is never lent again
            connection.close();                 // quiet, as the connection is evicted
        }

        @Override
        public int maximumSize() {
            return hikari.getMaximumPoolSize();
        }
    }
    // end::hikari-connection-pool[]

    /**
     * Threads of two services hand one name around in bursts, the wake-ups' connections retired after each (a second
     * without waiting calls): every connection handed to the pool once, counted by the probe, and no session left.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void everyWakeUpConnectionIsRetiredThroughThePoolOnce(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        Set<Connection> retired = ConcurrentHashMap.newKeySet();
        AtomicInteger retirements = new AtomicInteger();
        List<LeaseService> services = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) {
                HikariConnections hikari = new HikariConnections(db.newPool(4));
                services.add(LeaseFixture.builder(db, hikari.hikari)
                        .table(table)
                        .connectionPool(connection -> {
                            retired.add(connection);
                            retirements.incrementAndGet();
                            hikari.retire(connection);
                        })
                        .build());
            }
            for (int burst = 1; burst <= 2; burst++) {
                handOffs(services, 3, 10);
                int after = burst;
                // Each burst, each service whose waiters watched keeps its two connections until a second passes idle.
                await("the wake-up connections retired")
                        .atMost(LeaseFixture.AT_MOST)
                        .pollInterval(Duration.ofMillis(20))
                        .until(() -> services.stream().noneMatch(s -> s.probe().wakeUpWatching())
                                && retired(services) >= 2L * after
                                && retired(services) % 2 == 0);
            }
        } finally {
            services.forEach(LeaseService::close);
        }
        assertThat(retirements.get())
                .as("retired through the pool, as the probe counted")
                .isEqualTo(retired(services))
                .isEqualTo(retired.size())
                .isGreaterThanOrEqualTo(4);
        await("no wake-up session left")
                .atMost(LeaseFixture.AT_MOST)
                .pollInterval(Duration.ofMillis(20))
                .until(() -> db.queryLong(
                                "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE ?"
                                        + " AND INFO NOT LIKE '%PROCESSLIST%'",
                                "%" + table + "_queue q%CONNECTION_ID()%holdfast_bell_%")
                        == 0);
    }

    /**
     * A pool of two has no room for the wake-ups' two connections beside a statement: one warning, once, that asks
     * for a pool one connection larger (its size unknown to the service), however often the service asks again.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aPoolTooSmallForTheWakeUpsIsWarnedOfOnceWithTheIncreaseToMake(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        AtomicInteger borrows = new AtomicInteger();
        List<LogRecord> records = capture();
        try (LeaseService a = LeaseFixture.service(db, db.newPool(3), table);
                LeaseService b = LeaseFixture.service(db, counting(db.newPool(2), borrows), table)) {
            Lease held = a.acquire("job", "a", LONG, LONG);
            CompletableFuture<Lease> waiter = LeaseFixture.lockAsync(b, "job", "b", LONG, LONG);
            await("the warning").atMost(LeaseFixture.AT_MOST).until(() -> warnings(records) >= 1);
            int then = borrows.get();
            await("more borrows").atMost(LeaseFixture.AT_MOST).until(() -> borrows.get() >= then + 10);
            assertThat(warnings(records)).as("once").isOne();
            assertThat(records.stream()
                            .filter(r -> r.getLevel() == Level.WARNING)
                            .findFirst()
                            .orElseThrow()
                            .getMessage())
                    .contains(
                            "table " + table,
                            "need 3 connections of the pool at once",
                            "raise its maximum size (HikariCP: maximumPoolSize) by 1, to 3 at least");
            assertThat(b.probe().wakeUpWatching()).isFalse();
            a.release(held);
            b.release(waiter.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS)); // by polling
        } finally {
            WAKE_UPS.removeHandler(handler);
        }
    }

    /** A HikariCP pool of two, its size known: the warning comes at the first try and names the size to set. */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aHikariPoolTooSmallForTheWakeUpsIsWarnedOfWithTheSizeToSet(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        List<LogRecord> records = capture();
        HikariDataSource small = db.newPool(2);
        try (LeaseService a = LeaseFixture.service(db, db.newPool(3), table);
                LeaseService b = LeaseFixture.builder(db, small)
                        .table(table)
                        .connectionPool(new HikariConnections(small))
                        .build()) {
            Lease held = a.acquire("job", "a", LONG, LONG);
            CompletableFuture<Lease> waiter = LeaseFixture.lockAsync(b, "job", "b", LONG, LONG);
            await("the warning").atMost(LeaseFixture.AT_MOST).until(() -> warnings(records) >= 1);
            assertThat(records).as("at the first try: no INFO before").noneMatch(r -> r.getLevel() == Level.INFO);
            assertThat(records.get(0).getMessage())
                    .contains(
                            "table " + table,
                            "set its maximum size (HikariCP: maximumPoolSize) to 3 or more (it is 2)");
            a.release(held);
            b.release(waiter.get(LeaseFixture.AT_MOST.toSeconds(), TimeUnit.SECONDS)); // by polling
        } finally {
            WAKE_UPS.removeHandler(handler);
        }
    }

    private static long retired(List<LeaseService> services) {
        return services.stream()
                .mapToLong(s -> s.probe().wakeUpConnectionsRetired())
                .sum();
    }

    /** {@code threads} threads per service acquire and release one name {@code each} times, each holding it 1 ms. */
    private static void handOffs(List<LeaseService> services, int threads, int each) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(services.size() * threads);
        try {
            List<CompletableFuture<Void>> workers = new ArrayList<>();
            for (LeaseService leases : services) {
                for (int t = 0; t < threads; t++) {
                    String owner = "w" + workers.size();
                    workers.add(CompletableFuture.runAsync(
                            () -> {
                                for (int n = 0; n < each; n++) {
                                    try {
                                        Lease lease = leases.acquire("job", owner, LONG, LONG);
                                        Thread.sleep(1);
                                        leases.release(lease);
                                    } catch (InterruptedException e) {
                                        Thread.currentThread().interrupt();
                                        throw new IllegalStateException(e);
                                    }
                                }
                            },
                            pool));
                }
            }
            CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(2, TimeUnit.MINUTES);
        } finally {
            pool.shutdownNow();
        }
    }

    /** A data source that counts the connections asked of {@code pool}. */
    private static DataSource counting(DataSource pool, AtomicInteger borrows) {
        return (DataSource) Proxy.newProxyInstance(
                LeaseMariaDbWakeUpPoolTest.class.getClassLoader(),
                new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("getConnection")) {
                        borrows.incrementAndGet();
                    }
                    try {
                        return method.invoke(pool, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    private static volatile Handler handler;

    private static List<LogRecord> capture() {
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                records.add(record);
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        WAKE_UPS.addHandler(handler);
        return records;
    }

    private static long warnings(List<LogRecord> records) {
        return records.stream().filter(r -> r.getLevel() == Level.WARNING).count();
    }
}
