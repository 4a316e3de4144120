package dev.holdfast.spring.boot;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.DatabaseException;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseNotHeldException;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.lease.LeaseTimeoutException;
import dev.holdfast.pessimistic.LockTimeoutException;
import dev.holdfast.pessimistic.LockWait;
import dev.holdfast.pessimistic.PessimisticLocks;
import dev.holdfast.pessimistic.RowRef;
import dev.holdfast.pessimistic.offline.AlreadyLockedException;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.pessimistic.offline.LockManager;
import dev.holdfast.pessimistic.offline.LockNotHeldException;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.PessimisticLockingFailureException;

import java.sql.Connection;
import java.time.Duration;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The starter's beans, called from plain code (no {@code @Repository} translation), throw Spring's
 * {@code DataAccessException}s with the Holdfast exception as the cause: each failure provoked for real on the
 * database, ending with the database out of reach (the pool closed).
 */
class SpringExceptionsTest {

    private static ApplicationContextRunner runner(HikariDataSource pool, TestDatabase db, String leasesTable) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(HoldfastAutoConfiguration.class))
                .withBean(DataSource.class, () -> pool)
                .withPropertyValues(
                        "holdfast.jdbc.initialize-schema=always",
                        "holdfast.offline.table=" + db.newTableName("hf_spring_ex_locks"),
                        "holdfast.lease.table=" + leasesTable);
    }

    @DatabaseTest
    void rowLockTimeoutIsCannotAcquireLock(TestDatabase db) throws Exception {
        String table = db.newTableName("hf_spring_ex_rows");
        db.execute("CREATE TABLE " + table + " (id BIGINT PRIMARY KEY)");
        db.execute("INSERT INTO " + table + " VALUES (1)");
        String leasesTable = db.newTableName("hf_spring_ex_leases");
        db.dropAfterTest(leasesTable + "_queue");
        try (HikariDataSource pool = db.newPool(4)) {
            runner(pool, db, leasesTable).run(context -> {
                assertThat(context).hasNotFailed();
                PessimisticLocks locks = context.getBean(PessimisticLocks.class);
                RowRef row = RowRef.of(table, "id", 1L);
                try (Connection holder = pool.getConnection();
                        Connection waiter = pool.getConnection()) {
                    holder.setAutoCommit(false);
                    waiter.setAutoCommit(false);
                    assertThat(locks.forUpdate(holder, row, LockWait.noWait())).isTrue();
                    assertThatThrownBy(() -> locks.forUpdate(waiter, row, LockWait.atMost(Duration.ofMillis(200))))
                            .isInstanceOf(RowLockTimeoutException.class)
                            .isInstanceOf(CannotAcquireLockException.class)
                            .cause()
                            .isInstanceOf(LockTimeoutException.class);
                    assertThatThrownBy(() -> locks.forUpdate(waiter, row, LockWait.noWait()))
                            .isInstanceOf(CannotAcquireLockException.class)
                            .cause()
                            .isInstanceOf(LockTimeoutException.class);
                    waiter.rollback();
                    holder.rollback();
                }
            });
        }
    }

    @DatabaseTest
    void offlineLockAndLeaseRefusalsAndLossesAreSpringExceptions(TestDatabase db) throws Exception {
        String leasesTable = db.newTableName("hf_spring_ex_leases");
        db.dropAfterTest(leasesTable + "_queue");
        try (HikariDataSource pool = db.newPool(4)) {
            runner(pool, db, leasesTable).run(context -> {
                assertThat(context).hasNotFailed();
                for (LockManager locks :
                        new LockManager[] {context.getBean(LockManager.class), context.getBean(JdbcLockManager.class)
                        }) {
                    String id = locks.getClass().getSimpleName() + System.identityHashCode(locks);
                    LockId held = locks.tryLock("purchase_order", id, "kim");
                    // conflict: another owner holds it
                    assertThatThrownBy(() -> locks.tryLock("purchase_order", id, "lee"))
                            .isInstanceOf(OfflineLockHeldException.class)
                            .isInstanceOf(CannotAcquireLockException.class)
                            .cause()
                            .isInstanceOf(AlreadyLockedException.class);
                    locks.releaseLock(held, "kim");
                    // lost: the lock id authorizes nothing any more
                    assertThatThrownBy(() -> locks.checkLock(held, "purchase_order", id, "kim"))
                            .isInstanceOf(OfflineLockLostException.class)
                            .isInstanceOf(PessimisticLockingFailureException.class)
                            .cause()
                            .isInstanceOf(LockNotHeldException.class);
                }

                LeaseService leases = context.getBean(LeaseService.class);
                Lease lease = leases.tryAcquire("nightly", "server-1", Duration.ofMinutes(1))
                        .orElseThrow();
                // a blocking acquire whose bound runs out
                assertThatThrownBy(() -> leases.acquire("nightly", "server-2", Duration.ofMinutes(1), Duration.ZERO))
                        .isInstanceOf(CannotAcquireLockException.class)
                        .cause()
                        .isInstanceOf(LeaseTimeoutException.class);
                // a lost lease: broken by an operator, then released by its holder
                assertThat(leases.forceRelease("nightly", "operator")).isTrue();
                assertThatThrownBy(() -> leases.release(lease))
                        .isInstanceOf(PessimisticLockingFailureException.class)
                        .cause()
                        .isInstanceOf(LeaseNotHeldException.class);
            });
        }
    }

    @DatabaseTest
    void databaseOutOfReachIsAResourceFailure(TestDatabase db) throws Exception {
        String leasesTable = db.newTableName("hf_spring_ex_leases");
        db.dropAfterTest(leasesTable + "_queue");
        HikariDataSource pool = db.newPool(4);
        runner(pool, db, leasesTable).run(context -> {
            assertThat(context).hasNotFailed();
            LeaseService leases = context.getBean(LeaseService.class);
            LockManager locks = context.getBean(LockManager.class);
            pool.close(); // the database is out of reach: no connection comes from the pool
            assertThatThrownBy(() -> leases.tryAcquire("nightly", "server-1", Duration.ofMinutes(1)))
                    .isInstanceOf(DataAccessResourceFailureException.class)
                    .cause()
                    .isInstanceOf(DatabaseException.class);
            assertThatThrownBy(() -> locks.tryLock("purchase_order", "A-1", "kim"))
                    .isInstanceOf(DataAccessResourceFailureException.class)
                    .cause()
                    .isInstanceOf(DatabaseException.class);
        });
    }
}
