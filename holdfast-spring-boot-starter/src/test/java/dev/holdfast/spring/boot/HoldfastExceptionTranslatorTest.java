package dev.holdfast.spring.boot;

import dev.holdfast.DatabaseException;
import dev.holdfast.pessimistic.Blocker;
import dev.holdfast.pessimistic.Blockers;
import dev.holdfast.pessimistic.DeadlockException;
import dev.holdfast.pessimistic.LockTimeoutException;
import dev.holdfast.pessimistic.LockWait;
import dev.holdfast.pessimistic.PessimisticLocks;
import dev.holdfast.pessimistic.RowRef;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.PessimisticLockingFailureException;
import org.springframework.dao.annotation.PersistenceExceptionTranslationPostProcessor;
import org.springframework.jdbc.BadSqlGrammarException;
import org.springframework.stereotype.Repository;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/** Real Holdfast failures on every database, translated into Spring's DataAccessException tree. */
class HoldfastExceptionTranslatorTest {

    private final HoldfastExceptionTranslator translator = new HoldfastExceptionTranslator();

    private static String table(TestDatabase db) throws SQLException {
        String table = db.newTableName("hsb");
        db.execute("CREATE TABLE " + table + " (id BIGINT PRIMARY KEY)");
        db.execute("INSERT INTO " + table + " (id) VALUES (1)");
        db.execute("INSERT INTO " + table + " (id) VALUES (2)");
        return table;
    }

    private static Connection begin(DataSource ds) throws SQLException {
        Connection c = ds.getConnection();
        c.setAutoCommit(false);
        return c;
    }

    private static void end(Connection c) throws SQLException {
        c.rollback();
        c.setAutoCommit(true);
        c.close();
    }

    @DatabaseTest
    void aLockTimeoutBecomesCannotAcquireLock(TestDatabase db) throws Exception {
        String table = table(db);
        PessimisticLocks locks = PessimisticLocks.of(db.dataSource());
        Connection holder = begin(db.dataSource());
        Connection waiter = begin(db.dataSource());
        try {
            locks.forUpdate(holder, RowRef.of(table, 1L), LockWait.noWait());
            Throwable failure = catchThrowable(
                    () -> locks.forUpdate(waiter, RowRef.of(table, 1L), LockWait.atMost(Duration.ofMillis(200))));
            assertThat(failure).isInstanceOf(LockTimeoutException.class);

            DataAccessException translated = translator.translateExceptionIfPossible((RuntimeException) failure);
            assertThat(translated)
                    .isInstanceOf(CannotAcquireLockException.class)
                    .hasCause(failure)
                    .hasMessage(failure.getMessage());
            assertThat(((RowLockTimeoutException) translated).blockers())
                    .isSameAs(((LockTimeoutException) failure).blockers());
        } finally {
            end(waiter);
            end(holder);
        }
    }

    @DatabaseTest
    void aDeadlockBecomesPessimisticLockingFailure(TestDatabase db) throws Exception {
        String table = table(db);
        PessimisticLocks locks = PessimisticLocks.of(db.dataSource());
        CyclicBarrier bothHoldOne = new CyclicBarrier(2);
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            Future<RuntimeException> a = threads.submit(() -> lockTwo(db, locks, table, 1L, 2L, bothHoldOne));
            Future<RuntimeException> b = threads.submit(() -> lockTwo(db, locks, table, 2L, 1L, bothHoldOne));
            List<RuntimeException> failures = java.util.stream.Stream.of(
                            a.get(60, TimeUnit.SECONDS), b.get(60, TimeUnit.SECONDS))
                    .filter(java.util.Objects::nonNull)
                    .toList();
            assertThat(failures).hasSize(1).first().isInstanceOf(DeadlockException.class);

            DataAccessException translated = translator.translateExceptionIfPossible(failures.get(0));
            assertThat(translated)
                    .isExactlyInstanceOf(PessimisticLockingFailureException.class)
                    .hasCause(failures.get(0));
        } finally {
            threads.shutdownNow();
        }
    }

    private static RuntimeException lockTwo(
            TestDatabase db, PessimisticLocks locks, String table, long first, long second, CyclicBarrier barrier)
            throws Exception {
        Connection c = begin(db.dataSource());
        try {
            LockWait wait = LockWait.atMost(Duration.ofSeconds(20));
            locks.forUpdate(c, RowRef.of(table, first), wait);
            barrier.await(30, TimeUnit.SECONDS);
            try {
                locks.forUpdate(c, RowRef.of(table, second), wait);
                return null;
            } catch (DeadlockException e) {
                return e;
            }
        } finally {
            end(c);
        }
    }

    @DatabaseTest
    void leaseOutcomesBecomeLockingFailuresWithTheHoldfastExceptionAsCause(TestDatabase db) throws Exception {
        String table = db.newTableName("hf_translate_leases");
        db.dropAfterTest(table + "_queue");
        new dev.holdfast.jdbc.SchemaInstaller(db.dataSource()).install(dev.holdfast.jdbc.HoldfastTable.LEASES, table);
        HoldfastExceptionTranslator translator = new HoldfastExceptionTranslator();
        try (dev.holdfast.lease.LeaseService leases = dev.holdfast.lease.LeaseService.builder(db.dataSource())
                .table(table)
                .build()) {
            dev.holdfast.lease.Lease held = leases.tryAcquire("job", "a", java.time.Duration.ofSeconds(30))
                    .orElseThrow();

            RuntimeException timeout = org.assertj.core.api.Assertions.catchThrowableOfType(
                    dev.holdfast.lease.LeaseTimeoutException.class,
                    () -> leases.acquire("job", "b", java.time.Duration.ofSeconds(30), java.time.Duration.ZERO));
            assertThat(translator.translate(timeout))
                    .isExactlyInstanceOf(org.springframework.dao.CannotAcquireLockException.class)
                    .hasCause(timeout);

            leases.release(held);
            RuntimeException notHeld = org.assertj.core.api.Assertions.catchThrowableOfType(
                    dev.holdfast.lease.LeaseNotHeldException.class, () -> leases.release(held));
            assertThat(translator.translate(notHeld))
                    .isExactlyInstanceOf(org.springframework.dao.PessimisticLockingFailureException.class)
                    .hasCause(notHeld);

            dev.holdfast.lease.Lease brief = leases.tryAcquire("brief", "a", java.time.Duration.ofMillis(50))
                    .orElseThrow();
            Thread.sleep(200); // the 50 ms TTL runs out
            RuntimeException expired = org.assertj.core.api.Assertions.catchThrowableOfType(
                    dev.holdfast.lease.LeaseExpiredException.class, () -> leases.release(brief));
            assertThat(translator.translate(expired))
                    .isExactlyInstanceOf(org.springframework.dao.PessimisticLockingFailureException.class)
                    .hasCause(expired);

            dev.holdfast.lease.Lease guarded = leases.tryAcquire("guarded", "a", java.time.Duration.ofSeconds(30))
                    .orElseThrow();
            java.util.concurrent.ExecutorService worker = java.util.concurrent.Executors.newSingleThreadExecutor();
            try {
                RuntimeException lost = worker.submit(() -> {
                            dev.holdfast.lease.LeaseGuard guard =
                                    leases.keepAlive(guarded, java.time.Duration.ofSeconds(3), null);
                            leases.forceRelease("guarded");
                            try {
                                Thread.sleep(30_000); // interrupted once a renewal finds the lease gone
                            } catch (InterruptedException expected) {
                                // the guard saw the loss
                            }
                            RuntimeException seen = org.assertj.core.api.Assertions.catchThrowableOfType(
                                    dev.holdfast.lease.LeaseLostException.class, guard::checkValid);
                            guard.close();
                            return seen;
                        })
                        .get(30, java.util.concurrent.TimeUnit.SECONDS);
                assertThat(lost).isNotNull();
                assertThat(translator.translate(lost))
                        .isExactlyInstanceOf(org.springframework.dao.PessimisticLockingFailureException.class)
                        .hasCause(lost);
            } finally {
                worker.shutdownNow();
            }
        }
    }

    @DatabaseTest
    void otherDatabaseFailuresGoThroughSpringsSqlTranslation(TestDatabase db) throws Exception {
        PessimisticLocks locks = PessimisticLocks.of(db.dataSource());
        Connection c = begin(db.dataSource());
        try {
            Throwable failure = catchThrowable(
                    () -> locks.forUpdate(c, RowRef.of(db.newTableName("missing"), 1L), LockWait.noWait()));
            assertThat(failure).isInstanceOf(DatabaseException.class);

            DataAccessException translated = translator.translateExceptionIfPossible((RuntimeException) failure);
            assertThat(translated).isInstanceOf(BadSqlGrammarException.class).hasCause(failure.getCause());
        } finally {
            end(c);
        }
    }

    @DatabaseTest(only = TestDatabase.Kind.H2)
    void notHoldfastExceptionsAreLeftAlone(TestDatabase db) {
        IllegalArgumentException bad = new IllegalArgumentException("bad");
        assertThat(translator.translateExceptionIfPossible(bad)).isNull();
        assertThat(translator.translate(bad)).isSameAs(bad);
    }

    /** A plain Spring {@code @Repository} gets the translation from the auto-configured bean. */
    @DatabaseTest
    void repositoriesThrowSpringExceptions(TestDatabase db) throws Exception {
        String table = table(db);
        Connection holder = begin(db.dataSource());
        try {
            PessimisticLocks.of(db.dataSource()).forUpdate(holder, RowRef.of(table, 2L), LockWait.noWait());
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(HoldfastAutoConfiguration.class))
                    // Wrapped, so closing the context does not close the shared test pool.
                    .withBean(
                            DataSource.class,
                            () -> new org.springframework.jdbc.datasource.DelegatingDataSource(db.dataSource()))
                    .withBean(PersistenceExceptionTranslationPostProcessor.class)
                    .withBean(OrderLocks.class)
                    .run(context -> {
                        OrderLocks repository = context.getBean(OrderLocks.class);
                        Throwable failure = catchThrowable(() -> repository.lockNow(table, 2L));
                        assertThat(failure)
                                .isInstanceOf(CannotAcquireLockException.class)
                                .hasCauseInstanceOf(LockTimeoutException.class);
                    });
        } finally {
            end(holder);
        }
    }

    /** Through the auto-configured locks and translation, the Spring exception names who held the row. */
    @DatabaseTest
    void theTranslatedTimeoutNamesTheBlocker(TestDatabase db) throws Exception {
        String table = table(db);
        Connection holder = begin(db.dataSource());
        try {
            PessimisticLocks.of(db.dataSource()).forUpdate(holder, RowRef.of(table, 2L), LockWait.noWait());
            String holderId = sessionId(db, holder);
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(HoldfastAutoConfiguration.class))
                    .withBean(
                            DataSource.class,
                            () -> new org.springframework.jdbc.datasource.DelegatingDataSource(db.dataSource()))
                    .withBean(PersistenceExceptionTranslationPostProcessor.class)
                    .withBean(OrderLocks.class)
                    .run(context -> {
                        OrderLocks repository = context.getBean(OrderLocks.class);
                        Throwable failure =
                                catchThrowable(() -> repository.lockWithin(table, 2L, Duration.ofSeconds(1)));
                        assertThat(failure)
                                .isInstanceOf(RowLockTimeoutException.class)
                                .hasMessageContaining("blocked by session " + holderId);
                        Blockers blockers = ((RowLockTimeoutException) failure).blockers();
                        assertThat(blockers.known()).as(blockers.toString()).isTrue();
                        assertThat(blockers.sessions())
                                .extracting(Blocker::sessionId)
                                .containsExactly(holderId);
                    });
        } finally {
            end(holder);
        }
    }

    private static String sessionId(TestDatabase db, Connection c) throws SQLException {
        String sql = switch (db.kind()) {
            case POSTGRESQL -> "SELECT pg_backend_pid()";
            case MARIADB -> "SELECT CONNECTION_ID()";
            case H2 -> "SELECT SESSION_ID()";
        };
        try (java.sql.Statement s = c.createStatement();
                java.sql.ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    @Repository
    static class OrderLocks {
        private final DataSource dataSource;
        private final PessimisticLocks locks;

        OrderLocks(DataSource dataSource, PessimisticLocks locks) {
            this.dataSource = dataSource;
            this.locks = locks;
        }

        void lockWithin(String table, long id, Duration bound) throws SQLException {
            Connection c = begin(dataSource);
            try {
                locks.forUpdate(c, RowRef.of(table, id), LockWait.atMost(bound));
            } finally {
                end(c);
            }
        }

        void lockNow(String table, long id) throws SQLException {
            Connection c = begin(dataSource);
            try {
                locks.forUpdate(c, RowRef.of(table, id), LockWait.noWait());
            } finally {
                end(c);
            }
        }
    }
}
