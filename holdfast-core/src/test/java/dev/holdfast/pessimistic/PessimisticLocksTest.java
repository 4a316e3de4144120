package dev.holdfast.pessimistic;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.DatabaseException;
import dev.holdfast.LockWaits;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** The contract of {@link PessimisticLocks}, run on every database. */
class PessimisticLocksTest {

    private static final int ROWS = 12;
    /** Past a bound, for a loaded machine: a 0.6 s bound once ended after 1.36 s there (BlockersTest and LockBoundsTest allow 1 s too). */
    private static final Duration MARGIN = Duration.ofSeconds(1);

    private String table(TestDatabase db) throws SQLException {
        String table = db.newTableName("rowlock");
        db.execute("CREATE TABLE " + table + " (id BIGINT PRIMARY KEY, val BIGINT NOT NULL)");
        for (long id = 1; id <= ROWS; id++) {
            db.execute("INSERT INTO " + table + " (id, val) VALUES (?, 0)", id);
        }
        return table;
    }

    private static Connection begin(javax.sql.DataSource ds) throws SQLException {
        Connection c = ds.getConnection();
        c.setAutoCommit(false);
        return c;
    }

    private static void close(Connection c) throws SQLException {
        if (!c.isClosed()) {
            c.rollback();
            c.setAutoCommit(true);
            c.close();
        }
    }

    @DatabaseTest
    void locksAFreeRowAndReportsAMissingOne(TestDatabase db) throws Exception {
        String table = table(db);
        PessimisticLocks locks = PessimisticLocks.of(db.dataSource());
        Connection c = begin(db.dataSource());
        try {
            assertThat(locks.forUpdate(c, RowRef.of(table, 1L), LockWait.atMost(Duration.ofSeconds(1))))
                    .isTrue();
            assertThat(locks.forUpdate(c, RowRef.of(table, 999L), LockWait.atMost(Duration.ofSeconds(1))))
                    .isFalse();
            assertThat(locks.forUpdate(c, table, "id", 2, Duration.ofMillis(300)))
                    .isTrue();
        } finally {
            close(c);
        }
    }

    @DatabaseTest
    void aHalfSecondBoundStopsTheWait(TestDatabase db) throws Exception {
        boundStopsTheWait(db, Duration.ofMillis(500));
    }

    @DatabaseTest
    void aTwoSecondBoundStopsTheWait(TestDatabase db) throws Exception {
        boundStopsTheWait(db, Duration.ofSeconds(2));
    }

    private void boundStopsTheWait(TestDatabase db, Duration bound) throws Exception {
        String table = table(db);
        PessimisticLocks locks = PessimisticLocks.of(db.dataSource());
        Connection holder = begin(db.dataSource());
        Connection waiter = begin(db.dataSource());
        try {
            assertThat(locks.forUpdate(holder, RowRef.of(table, 1L), LockWait.noWait()))
                    .isTrue();
            // Work done before the lock must not survive: the library rolls the transaction back.
            try (Statement s = waiter.createStatement()) {
                s.executeUpdate("UPDATE " + table + " SET val = 99 WHERE id = 2");
            }
            long start = System.nanoTime();
            LockTimeoutException e = catchThrowableOfType(
                    LockTimeoutException.class,
                    () -> locks.forUpdate(waiter, RowRef.of(table, 1L), LockWait.atMost(bound)));
            Duration elapsed = Duration.ofNanos(System.nanoTime() - start);

            assertThat(e).as("lock timeout").isNotNull();
            assertThat(elapsed).as("waited at least the bound").isGreaterThanOrEqualTo(bound.minusMillis(5));
            assertThat(elapsed).as("stopped well before twice the bound").isLessThan(bound.multipliedBy(2));
            assertThat(e.row()).isEqualTo(RowRef.of(table, 1L));
            assertThat(e.bound()).isEqualTo(bound);
            assertThat(e.waited()).isLessThanOrEqualTo(elapsed);
            assertThat(e.transactionRolledBack()).isTrue();
            assertThat(e).hasMessageContaining(table + "(id=1)").hasMessageContaining(bound.toMillis() + " ms");

            waiter.commit(); // must not commit the marker written before the lock
            assertThat(db.queryLong("SELECT val FROM " + table + " WHERE id = 2"))
                    .isZero();
            holder.commit();
            // The waiter's connection is usable again and can now take the lock.
            assertThat(locks.forUpdate(waiter, RowRef.of(table, 1L), LockWait.noWait()))
                    .isTrue();
        } finally {
            close(holder);
            close(waiter);
        }
    }

    @DatabaseTest
    void noWaitFailsAtOnceAndSkipLockedSkips(TestDatabase db) throws Exception {
        String table = table(db);
        PessimisticLocks locks = PessimisticLocks.of(db.dataSource());
        Connection holder = begin(db.dataSource());
        Connection other = begin(db.dataSource());
        try {
            locks.forUpdate(holder, RowRef.of(table, 1L), LockWait.noWait());

            long start = System.nanoTime();
            LockTimeoutException e = catchThrowableOfType(
                    LockTimeoutException.class,
                    () -> locks.forUpdate(other, RowRef.of(table, 1L), LockWait.atMost(Duration.ZERO)));
            // Every server default wait is ≥ 1 s (H2 2 s for LOCK_TIMEOUT 0, MariaDB 50 s).
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(900));
            assertThat(e).isNotNull().hasMessageContaining("no wait");
            assertThat(e.bound()).isZero();

            assertThat(locks.forUpdate(other, RowRef.of(table, 1L), LockWait.skipLocked()))
                    .isFalse();
            assertThat(locks.forUpdate(other, RowRef.of(table, 2L), LockWait.skipLocked()))
                    .isTrue();
            assertThat(locks.forUpdateAll(
                            other,
                            List.of(RowRef.of(table, 3L), RowRef.of(table, 1L), RowRef.of(table, 4L)),
                            LockWait.skipLocked()))
                    .containsExactly(RowRef.of(table, 3L), RowRef.of(table, 4L));
        } finally {
            close(holder);
            close(other);
        }
    }

    @DatabaseTest
    void pooledConnectionsComeBackWithTheServerDefaults(TestDatabase db) throws Exception {
        String table = table(db);
        try (HikariDataSource pool = db.newPool(1)) {
            String before = lockSettings(db, pool);
            PessimisticLocks locks = PessimisticLocks.of(pool);
            HikariDataSource other = db.newPool(1);
            Connection holder = begin(other);
            try {
                locks.forUpdate(holder, RowRef.of(table, 1L), LockWait.noWait());
                // Success path: settings are restored inside the same transaction already.
                try (Connection c = begin(pool)) {
                    locks.forUpdate(c, RowRef.of(table, 2L), LockWait.atMost(Duration.ofMillis(700)));
                    assertThat(lockSettings(c, db)).isEqualTo(before);
                    c.commit();
                    c.setAutoCommit(true);
                }
                assertThat(lockSettings(db, pool)).isEqualTo(before);
                // Failure path: a timeout.
                try (Connection c = begin(pool)) {
                    assertThatThrownBy(() ->
                                    locks.forUpdate(c, RowRef.of(table, 1L), LockWait.atMost(Duration.ofMillis(200))))
                            .isInstanceOf(LockTimeoutException.class);
                    c.setAutoCommit(true);
                }
                assertThat(lockSettings(db, pool)).isEqualTo(before);
                // Failure path: an SQL error (missing table).
                try (Connection c = begin(pool)) {
                    assertThatThrownBy(() -> locks.forUpdate(
                                    c, RowRef.of(table + "_missing", 1L), LockWait.atMost(Duration.ofMillis(200))))
                            .isInstanceOf(DatabaseException.class);
                    c.setAutoCommit(true);
                }
                assertThat(lockSettings(db, pool)).isEqualTo(before);
            } finally {
                close(holder);
            }
        }
    }

    static String lockSettings(TestDatabase db, javax.sql.DataSource pool) throws SQLException {
        try (Connection c = pool.getConnection()) {
            return lockSettings(c, db);
        }
    }

    static String lockSettings(Connection c, TestDatabase db) throws SQLException {
        String sql = switch (db.kind()) {
            case H2 -> "SELECT CAST(LOCK_TIMEOUT() AS VARCHAR)";
            case POSTGRESQL -> "SELECT current_setting('lock_timeout') || '/' || current_setting('statement_timeout')";
            case MARIADB ->
                "SELECT CONCAT(@@session.innodb_lock_wait_timeout, '/', @@session.max_statement_time,"
                        + " '/', @@session.lock_wait_timeout)";
        };
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    @DatabaseTest
    void opposingLockOrdersDeadlockAndTheVictimIsRolledBack(TestDatabase db) throws Exception {
        String table = table(db);
        PessimisticLocks locks = PessimisticLocks.of(db.dataSource());
        CyclicBarrier bothHoldTheirFirstRow = new CyclicBarrier(2);
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            Callable<String> ab = () -> lockTwo(db, locks, table, 1L, 2L, bothHoldTheirFirstRow);
            Callable<String> ba = () -> lockTwo(db, locks, table, 2L, 1L, bothHoldTheirFirstRow);
            Future<String> first = threads.submit(ab);
            Future<String> second = threads.submit(ba);
            List<String> outcomes = List.of(first.get(60, TimeUnit.SECONDS), second.get(60, TimeUnit.SECONDS));
            assertThat(outcomes).containsExactlyInAnyOrder("committed", "deadlock victim");
            // The victim's marker write (row 10 + its first key) is gone; the winner's is there.
            assertThat(db.queryLong("SELECT SUM(val) FROM " + table + " WHERE id IN (11, 12)"))
                    .isEqualTo(1);
        } finally {
            threads.shutdownNow();
        }
    }

    private static String lockTwo(
            TestDatabase db, PessimisticLocks locks, String table, long firstKey, long secondKey, CyclicBarrier barrier)
            throws Exception {
        Connection c = begin(db.dataSource());
        try {
            try (Statement s = c.createStatement()) {
                s.executeUpdate("UPDATE " + table + " SET val = 1 WHERE id = " + (10 + firstKey));
            }
            LockWait wait = LockWait.atMost(Duration.ofSeconds(20));
            locks.forUpdate(c, RowRef.of(table, firstKey), wait);
            barrier.await(30, TimeUnit.SECONDS);
            try {
                locks.forUpdate(c, RowRef.of(table, secondKey), wait);
            } catch (DeadlockException e) {
                assertThat(e.row()).isEqualTo(RowRef.of(table, secondKey));
                assertThat(e.transactionRolledBack()).isTrue();
                c.commit(); // commits nothing: the transaction was rolled back
                return "deadlock victim";
            }
            c.commit();
            return "committed";
        } finally {
            close(c);
        }
    }

    @DatabaseTest
    void orderedMultiLockNeverDeadlocksUnderStress(TestDatabase db) throws Exception {
        String table = table(db);
        PessimisticLocks locks = PessimisticLocks.of(db.dataSource());
        int threads = 8;
        int iterations = 500;
        AtomicInteger deadlocks = new AtomicInteger();
        AtomicInteger timeouts = new AtomicInteger();
        AtomicLong increments = new AtomicLong();
        try (HikariDataSource pool = db.newPool(threads)) {
            ExecutorService executor = Executors.newFixedThreadPool(threads);
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                futures.add(executor.submit(() -> {
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    for (int i = 0; i < iterations; i++) {
                        List<RowRef> rows = new ArrayList<>();
                        int size = 2 + random.nextInt(4);
                        while (rows.size() < size) {
                            RowRef row = RowRef.of(table, 1L + random.nextInt(ROWS));
                            if (!rows.contains(row)) {
                                rows.add(row); // random order: the library must sort
                            }
                        }
                        try (Connection c = begin(pool)) {
                            try {
                                List<RowRef> locked =
                                        locks.forUpdateAll(c, rows, LockWait.atMost(Duration.ofSeconds(30)));
                                try (PreparedStatement ps =
                                        c.prepareStatement("UPDATE " + table + " SET val = val + 1 WHERE id = ?")) {
                                    for (RowRef row : locked) {
                                        ps.setObject(1, row.key());
                                        ps.executeUpdate();
                                    }
                                }
                                c.commit();
                                increments.addAndGet(locked.size());
                            } catch (DeadlockException e) {
                                deadlocks.incrementAndGet();
                            } catch (LockTimeoutException e) {
                                timeouts.incrementAndGet();
                            } finally {
                                c.setAutoCommit(true);
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get(10, TimeUnit.MINUTES);
            }
            executor.shutdown();
        }
        System.out.printf(
                "[%s] ordered multi-lock: %d transactions, %d row increments, %d deadlocks, %d timeouts%n",
                db.id(), threads * iterations, increments.get(), deadlocks.get(), timeouts.get());
        assertThat(deadlocks).hasValue(0);
        assertThat(timeouts).hasValue(0);
        assertThat(increments.get()).isGreaterThanOrEqualTo(2L * threads * iterations);
        assertThat(db.queryLong("SELECT SUM(val) FROM " + table)).isEqualTo(increments.get());
    }

    @DatabaseTest
    void aBoundCoversTheWholeMultiLock(TestDatabase db) throws Exception {
        String table = table(db);
        PessimisticLocks locks = PessimisticLocks.of(db.dataSource());
        Connection holder = begin(db.dataSource());
        Connection waiter = begin(db.dataSource());
        try {
            locks.forUpdate(holder, RowRef.of(table, 5L), LockWait.noWait());
            Duration bound = Duration.ofMillis(600);
            long start = System.nanoTime();
            LockTimeoutException e = catchThrowableOfType(
                    LockTimeoutException.class,
                    () -> locks.forUpdateAll(
                            waiter,
                            List.of(RowRef.of(table, 5L), RowRef.of(table, 1L), RowRef.of(table, 3L)),
                            LockWait.atMost(bound)));
            Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
            assertThat(e).isNotNull();
            assertThat(e.row()).isEqualTo(RowRef.of(table, 5L));
            assertThat(e.bound()).isEqualTo(bound);
            assertThat(elapsed)
                    .as("stopped within the bound and a loaded machine's margin")
                    .isLessThan(bound.plus(MARGIN));
            // Rolled back: rows 1 and 3, locked first, are free again.
            assertThat(locks.forUpdate(holder, RowRef.of(table, 1L), LockWait.noWait()))
                    .isTrue();
            assertThat(locks.forUpdate(holder, RowRef.of(table, 3L), LockWait.noWait()))
                    .isTrue();
        } finally {
            close(holder);
            close(waiter);
        }
    }

    // Not H2: embedded H2 has no server connection to kill, and ABORT_SESSION does not interrupt a
    // lock wait (measured: the waiter sat out its whole 20 s bound).
    @DatabaseTest(only = {TestDatabase.Kind.POSTGRESQL, TestDatabase.Kind.MARIADB})
    void aWaiterWhoseConnectionIsKilledGetsAClearErrorAndThePoolRecovers(TestDatabase db) throws Exception {
        String table = table(db);
        PessimisticLocks locks = PessimisticLocks.of(db.dataSource());
        Connection holder = begin(db.dataSource());
        HikariDataSource pool = db.newPool(1);
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            locks.forUpdate(holder, RowRef.of(table, 1L), LockWait.noWait());
            Future<Throwable> waiting;
            String session;
            try (Connection waiter = begin(pool)) {
                session = sessionId(db, waiter);
                waiting = thread.submit(() -> {
                    try {
                        locks.forUpdate(waiter, RowRef.of(table, 1L), LockWait.atMost(Duration.ofSeconds(20)));
                        return null;
                    } catch (RuntimeException e) {
                        return e;
                    }
                });
                LockWaits.awaitWaitingForALock(db, "%SELECT 1 FROM " + table + " WHERE %FOR UPDATE%", 1);
                kill(db, session);
                Throwable failure = waiting.get(15, TimeUnit.SECONDS);
                assertThat(failure)
                        .isInstanceOf(DatabaseException.class)
                        .isNotInstanceOf(RowLockException.class)
                        .hasMessageContaining("locking " + table + "(id=1)");
                assertThat(locks.dialect().classify(failure))
                        .isIn(
                                dev.holdfast.jdbc.dialect.SqlErrorKind.CONNECTION_LOST,
                                dev.holdfast.jdbc.dialect.SqlErrorKind.STATEMENT_CANCELLED);
            }
            holder.commit();
            // The pool hands out a working connection again, which can take the lock.
            try (Connection next = begin(pool)) {
                assertThat(locks.forUpdate(next, RowRef.of(table, 1L), LockWait.noWait()))
                        .isTrue();
                next.rollback();
                next.setAutoCommit(true);
            }
        } finally {
            thread.shutdownNow();
            close(holder);
        }
    }

    private static String sessionId(TestDatabase db, Connection c) throws SQLException {
        String sql = db.kind() == TestDatabase.Kind.POSTGRESQL ? "SELECT pg_backend_pid()" : "SELECT CONNECTION_ID()";
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    private static void kill(TestDatabase db, String session) throws SQLException {
        if (db.kind() == TestDatabase.Kind.POSTGRESQL) {
            db.queryString("SELECT pg_terminate_backend(" + Long.parseLong(session) + ")");
        } else {
            db.execute("KILL " + Long.parseLong(session));
        }
    }

    @DatabaseTest
    void badInputIsRefusedBeforeAnySqlRuns(TestDatabase db) throws Exception {
        String table = table(db);
        PessimisticLocks locks = PessimisticLocks.of(db.dataSource());
        try (Connection real = begin(db.dataSource())) {
            AtomicInteger statements = new AtomicInteger();
            Connection c = (Connection) Proxy.newProxyInstance(
                    getClass().getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                        if (method.getName().startsWith("prepare")
                                || method.getName().startsWith("create")) {
                            statements.incrementAndGet();
                        }
                        return method.invoke(real, args);
                    });
            LockWait wait = LockWait.atMost(Duration.ofSeconds(1));
            List<Runnable> bad = List.of(
                    () -> locks.forUpdate(c, table, "id", 1L, Duration.ofMillis(-1)),
                    () -> locks.forUpdate(c, table, "id", 1L, Duration.ofDays(2)),
                    () -> locks.forUpdate(c, table, "id", 1L, null),
                    () -> locks.forUpdate(c, table + "; DROP TABLE " + table, "id", 1L, Duration.ofSeconds(1)),
                    () -> locks.forUpdate(c, table, "id = id OR 1", 1L, Duration.ofSeconds(1)),
                    () -> locks.forUpdate(c, null, "id", 1L, Duration.ofSeconds(1)),
                    () -> locks.forUpdate(c, " ", "id", 1L, Duration.ofSeconds(1)),
                    () -> locks.forUpdate(c, table, "id", null, Duration.ofSeconds(1)),
                    () -> locks.forUpdate(c, table, "id", "  ", Duration.ofSeconds(1)),
                    () -> locks.forUpdate(c, table, "id", "x".repeat(2000), Duration.ofSeconds(1)),
                    () -> locks.forUpdate(c, table, "id", new Object(), Duration.ofSeconds(1)),
                    () -> locks.forUpdate(null, RowRef.of(table, 1L), wait),
                    () -> locks.forUpdate(c, null, wait),
                    () -> locks.forUpdate(c, RowRef.of(table, 1L), null),
                    () -> locks.forUpdateAll(c, null, wait),
                    () -> locks.forUpdateAll(c, java.util.Arrays.asList(RowRef.of(table, 1L), null), wait));
            for (Runnable call : bad) {
                assertThatThrownBy(call::run)
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageNotContaining("null\n");
            }
            assertThat(statements).as("statements prepared").hasValue(0);
            real.rollback();
        }
        try (Connection autoCommit = db.connection()) {
            assertThatThrownBy(() -> locks.forUpdate(autoCommit, RowRef.of(table, 1L), LockWait.noWait()))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("auto-commit");
        }
        assertThat(db.queryLong("SELECT COUNT(*) FROM " + table)).isEqualTo(ROWS);
        assertThat(db.queryLong("SELECT SUM(val) FROM " + table)).isZero();
    }
}
