package dev.holdfast.spring.boot;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.pessimistic.offline.HeldLock;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.pessimistic.offline.LockManager;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Lock operations of the auto-configured {@link LockManager} commit on their own: a {@code @Transactional}
 * method that rolls back neither loses the lock it took nor gets back the lock it released, and its own
 * work is rolled back (not committed early by the lock call) — also when the application's DataSource
 * is a {@link TransactionAwareDataSourceProxy}.
 */
class OfflineLockTransactionTest {

    /** Does its work in a Spring transaction and then fails, so the transaction rolls back. */
    public static class Work {
        private final JdbcTemplate jdbc;
        private final LockManager locks;
        private final String table;

        public Work(DataSource dataSource, LockManager locks, String table) {
            this.jdbc = new JdbcTemplate(dataSource);
            this.locks = locks;
            this.table = table;
        }

        @Transactional
        public void lockThenFail(String order, AtomicReference<LockId> taken) {
            jdbc.update("INSERT INTO " + table + " (order_no, note) VALUES (?, 'written before the lock')", order);
            taken.set(locks.tryLock("purchase_order", order, "kim"));
            jdbc.update("UPDATE " + table + " SET note = 'written after the lock' WHERE order_no = ?", order);
            throw new IllegalStateException("the edit fails after taking the lock");
        }

        @Transactional
        public void releaseThenFail(String order, LockId lockId) {
            jdbc.update("INSERT INTO " + table + " (order_no, note) VALUES (?, 'written before the release')", order);
            locks.releaseLock(lockId, "kim");
            throw new IllegalStateException("the save fails after releasing the lock");
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    static class App {
        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        Work work(DataSource dataSource, LockManager locks, Environment env) {
            return new Work(dataSource, locks, env.getRequiredProperty("test.work-table"));
        }
    }

    @DatabaseTest
    void ownerBindingIsOffByDefaultAndOnWhenConfigured(TestDatabase db) throws Exception {
        String locksTable = db.newTableName("hf_sb_bound");
        try (HikariDataSource pool = db.newPool(2)) {
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(HoldfastAutoConfiguration.class))
                    .withBean(DataSource.class, () -> pool)
                    .withPropertyValues(
                            "holdfast.jdbc.initialize-schema=always",
                            "holdfast.offline.table=" + locksTable,
                            "holdfast.offline.owner-binding=true")
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        JdbcLockManager store = context.getBean(JdbcLockManager.class);
                        assertThat(store.ownerBinding()).isTrue();
                        LockId lockId = store.tryLock("purchase_order", "A-1", "kim");
                        assertThatThrownBy(() -> store.checkLock(lockId)).isInstanceOf(IllegalStateException.class);
                        store.checkLock(lockId, "purchase_order", "A-1", "kim");
                        store.releaseLock(lockId, "kim");
                    });
        }
    }

    @DatabaseTest
    void rolledBackTransactionNeitherLosesNorLeaksTheLock(TestDatabase db) throws Exception {
        check(db, false);
    }

    @DatabaseTest
    void aTransactionAwareProxyIsUnwrapped(TestDatabase db) throws Exception {
        check(db, true);
    }

    private void check(TestDatabase db, boolean proxied) throws Exception {
        String locksTable = db.newTableName("hf_sb_locks");
        String workTable = db.newTableName("hf_sb_work");
        db.execute("CREATE TABLE " + workTable + " (order_no VARCHAR(40) PRIMARY KEY, note VARCHAR(100))");
        try (HikariDataSource pool = db.newPool(4)) {
            DataSource appDataSource = proxied ? new TransactionAwareDataSourceProxy(pool) : pool;
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(HoldfastAutoConfiguration.class))
                    .withUserConfiguration(App.class)
                    .withBean(DataSource.class, () -> appDataSource)
                    .withPropertyValues(
                            "holdfast.jdbc.initialize-schema=always",
                            "holdfast.offline.table=" + locksTable,
                            "test.work-table=" + workTable)
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        JdbcLockManager store = context.getBean(JdbcLockManager.class);
                        assertThat(store.ownerBinding())
                                .as("off by default, as in the builder")
                                .isFalse();
                        assertThat(store.table()).isEqualTo(locksTable);
                        Work work = context.getBean(Work.class);
                        LockManager locks = context.getBean(LockManager.class);

                        // A lock taken inside a transaction that rolls back stays taken, and still authorizes.
                        AtomicReference<LockId> taken = new AtomicReference<>();
                        assertThatThrownBy(() -> work.lockThenFail("A-1", taken))
                                .isInstanceOf(IllegalStateException.class);
                        assertThat(taken.get()).isNotNull();
                        Optional<HeldLock> holder = store.holder("purchase_order", "A-1");
                        assertThat(holder).map(HeldLock::owner).contains("kim");
                        locks.checkLock(taken.get(), "purchase_order", "A-1", "kim");
                        // ... and the transaction's own work was rolled back, not committed early by the lock call.
                        assertThat(db.queryLong("SELECT COUNT(*) FROM " + workTable))
                                .isZero();

                        // A release inside a transaction that rolls back stays released.
                        assertThatThrownBy(() -> work.releaseThenFail("A-2", taken.get()))
                                .isInstanceOf(IllegalStateException.class);
                        assertThat(store.holder("purchase_order", "A-1")).isEmpty();
                        assertThat(db.queryLong("SELECT COUNT(*) FROM " + workTable))
                                .isZero();
                        LockId next = locks.tryLock("purchase_order", "A-1", "bob");
                        locks.releaseLock(next, "bob");

                        assertThat(pool.getHikariPoolMXBean().getActiveConnections())
                                .isZero();
                    });
        }
    }

    /**
     * Why the proxy must be unwrapped: a lock manager given the transaction-aware proxy borrows the
     * transaction's own connection, and switching it to autocommit commits the caller's work early.
     */
    @DatabaseTest
    void aLockManagerOnTheProxyWouldCommitTheCallersWorkEarly(TestDatabase db) throws Exception {
        String locksTable = db.newTableName("hf_sb_locks");
        String workTable = db.newTableName("hf_sb_work");
        db.execute("CREATE TABLE " + workTable + " (order_no VARCHAR(40) PRIMARY KEY, note VARCHAR(100))");
        try (HikariDataSource pool = db.newPool(4)) {
            new dev.holdfast.jdbc.SchemaInstaller(pool)
                    .install(dev.holdfast.jdbc.HoldfastTable.OFFLINE_LOCKS, locksTable);
            DataSource proxy = new TransactionAwareDataSourceProxy(pool);
            LockManager wrong = JdbcLockManager.builder(proxy).table(locksTable).build();
            Work work = new Work(proxy, wrong, workTable);
            org.springframework.transaction.support.TransactionTemplate tx =
                    new org.springframework.transaction.support.TransactionTemplate(
                            new DataSourceTransactionManager(pool));
            assertThatThrownBy(() -> tx.executeWithoutResult(s -> work.lockThenFail("B-1", new AtomicReference<>())))
                    .isInstanceOf(IllegalStateException.class);
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + workTable)).isEqualTo(1);
            assertThat(db.queryString("SELECT note FROM " + workTable)).isEqualTo("written before the lock");
        }
    }
}
