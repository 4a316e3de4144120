package dev.holdfast.spring.boot;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.pessimistic.LockTimeoutException;
import dev.holdfast.pessimistic.LockWait;
import dev.holdfast.pessimistic.PessimisticLocks;
import dev.holdfast.pessimistic.RowRef;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.transaction.IllegalTransactionStateException;
import org.springframework.transaction.support.TransactionTemplate;

import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The auto-configured {@link TransactionalRowLocks} locks rows on the connection of the current Spring
 * transaction: the lock lasts until that transaction commits, a timeout is Spring's exception and rolls the
 * transaction back, a call without a transaction is refused before anything is locked, and no connection is
 * left borrowed.
 */
class TransactionalRowLocksTest {

    /** Every lock attempt the auto-configured {@link PessimisticLocks} reports, as (row, locked). */
    private final List<String> observed = new CopyOnWriteArrayList<>();

    private ApplicationContextRunner runner(DataSource appDataSource, TestDatabase db) {
        String leasesTable = db.newTableName("hf_txrl_leases");
        db.dropAfterTest(leasesTable + "_queue");
        PessimisticLocks.Observer observer =
                (row, wait, waited, locked, failure) -> observed.add(row.key() + ":" + locked);
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(HoldfastAutoConfiguration.class))
                .withBean(DataSource.class, () -> appDataSource)
                .withBean(PessimisticLocks.Observer.class, () -> observer)
                .withPropertyValues(
                        "holdfast.jdbc.initialize-schema=always",
                        "holdfast.offline.table=" + db.newTableName("hf_txrl_locks"),
                        "holdfast.lease.table=" + leasesTable);
    }

    private static String ordersTable(TestDatabase db) throws Exception {
        String table = db.newTableName("hf_txrl_orders");
        db.execute("CREATE TABLE " + table + " (order_no VARCHAR(40) PRIMARY KEY, note VARCHAR(100))");
        db.execute("INSERT INTO " + table + " (order_no, note) VALUES ('A-1', 'new')");
        return table;
    }

    @DatabaseTest
    void theLockIsHeldByTheTransactionUntilItCommits(TestDatabase db) throws Exception {
        lockHeldUntilCommit(db, false);
    }

    /** The transaction manager binds the pool behind a {@link TransactionAwareDataSourceProxy}; the locks find it. */
    @DatabaseTest
    void aTransactionAwareProxyAsTheApplicationsDataSourceFindsTheTransaction(TestDatabase db) throws Exception {
        lockHeldUntilCommit(db, true);
    }

    private void lockHeldUntilCommit(TestDatabase db, boolean proxied) throws Exception {
        String table = ordersTable(db);
        RowRef row = RowRef.of(table, "order_no", "A-1");
        try (HikariDataSource pool = db.newPool(4)) {
            DataSource appDataSource = proxied ? new TransactionAwareDataSourceProxy(pool) : pool;
            runner(appDataSource, db).run(context -> {
                assertThat(context).hasNotFailed();
                TransactionalRowLocks rowLocks = context.getBean(TransactionalRowLocks.class);
                PessimisticLocks locks = context.getBean(PessimisticLocks.class);
                TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(appDataSource));
                try (Connection other = pool.getConnection()) {
                    other.setAutoCommit(false);
                    tx.executeWithoutResult(status -> {
                        assertThat(rowLocks.forUpdate(row, LockWait.noWait())).isTrue();
                        assertThatThrownBy(() -> locks.forUpdate(other, row, LockWait.noWait()))
                                .as("another connection while the transaction is open")
                                .isInstanceOf(RowLockTimeoutException.class);
                        assertThat(rowLocks.forUpdateAll(
                                        List.of(row, RowRef.of(table, "order_no", "missing")),
                                        LockWait.atMost(Duration.ofSeconds(2))))
                                .containsExactly(row);
                    });
                    assertThat(locks.forUpdate(other, row, LockWait.noWait()))
                            .as("after the commit")
                            .isTrue();
                    other.rollback();
                }
                assertThat(observed)
                        .as("through the auto-configured, observed PessimisticLocks")
                        .containsExactly("A-1:true", "A-1:false", "A-1:true", "missing:false", "A-1:true");
                assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isZero();
            });
        }
    }

    @DatabaseTest
    void aTimeoutIsSpringsExceptionAndRollsTheTransactionBack(TestDatabase db) throws Exception {
        String table = ordersTable(db);
        RowRef row = RowRef.of(table, "order_no", "A-1");
        try (HikariDataSource pool = db.newPool(4)) {
            runner(pool, db).run(context -> {
                assertThat(context).hasNotFailed();
                TransactionalRowLocks rowLocks = context.getBean(TransactionalRowLocks.class);
                PessimisticLocks locks = context.getBean(PessimisticLocks.class);
                TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(pool));
                JdbcTemplate jdbc = new JdbcTemplate(pool);
                try (Connection holder = pool.getConnection()) {
                    holder.setAutoCommit(false);
                    assertThat(locks.forUpdate(holder, row, LockWait.noWait())).isTrue();
                    assertThatThrownBy(() -> tx.executeWithoutResult(status -> {
                                jdbc.update("INSERT INTO " + table
                                        + " (order_no, note) VALUES ('B-1', 'written before the lock')");
                                rowLocks.forUpdate(row, LockWait.atMost(Duration.ofMillis(300)));
                            }))
                            .isInstanceOf(RowLockTimeoutException.class)
                            .isInstanceOf(CannotAcquireLockException.class)
                            .cause()
                            .isInstanceOf(LockTimeoutException.class);
                    holder.rollback();
                }
                assertThat(db.queryLong("SELECT COUNT(*) FROM " + table))
                        .as("the insert was rolled back")
                        .isEqualTo(1);
                // the wait's blocker observation may still be handing its own connection back
                await().untilAsserted(
                                () -> assertThat(pool.getHikariPoolMXBean().getActiveConnections())
                                        .isZero());
            });
        }
    }

    @DatabaseTest
    void withoutATransactionItRefusesAndLocksNothing(TestDatabase db) throws Exception {
        String table = ordersTable(db);
        RowRef row = RowRef.of(table, "order_no", "A-1");
        try (HikariDataSource pool = db.newPool(4)) {
            runner(pool, db).run(context -> {
                assertThat(context).hasNotFailed();
                TransactionalRowLocks rowLocks = context.getBean(TransactionalRowLocks.class);
                PessimisticLocks locks = context.getBean(PessimisticLocks.class);
                assertThatThrownBy(() -> rowLocks.forUpdate(row, LockWait.noWait()))
                        .isInstanceOf(IllegalTransactionStateException.class)
                        .hasMessageContaining("No active Spring transaction");
                assertThatThrownBy(() -> rowLocks.forUpdateAll(List.of(row), LockWait.noWait()))
                        .isInstanceOf(IllegalTransactionStateException.class);
                assertThat(observed).as("no lock attempted").isEmpty();
                assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isZero();
                try (Connection other = pool.getConnection()) {
                    other.setAutoCommit(false);
                    assertThat(locks.forUpdate(other, row, LockWait.noWait()))
                            .as("nothing locked")
                            .isTrue();
                    other.rollback();
                }
            });
        }
    }
}
