package dev.holdfast.spring.boot;

import dev.holdfast.pessimistic.LockTimeoutException;
import dev.holdfast.pessimistic.LockWait;
import dev.holdfast.pessimistic.PessimisticLocks;
import dev.holdfast.pessimistic.RowRef;
import dev.holdfast.pessimistic.offline.AlreadyLockedException;
import dev.holdfast.pessimistic.offline.ForeignLockException;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.pessimistic.offline.LockExpiredException;
import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.pessimistic.offline.LockManager;
import dev.holdfast.pessimistic.offline.LockNotHeldException;
import dev.holdfast.spring.boot.metrics.HoldfastMetricsAutoConfiguration;
import dev.holdfast.spring.boot.metrics.MeteredLockManager;
import dev.holdfast.spring.boot.metrics.PessimisticLockMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HoldfastMetricsTest {

    private static DataSource h2() {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:metrics-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        return ds;
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    HoldfastAutoConfiguration.class,
                    HoldfastMetricsAutoConfiguration.class,
                    org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration.class))
            .withBean(DataSource.class, HoldfastMetricsTest::h2)
            .withPropertyValues("holdfast.jdbc.initialize-schema=always");

    private static double count(MeterRegistry r, String name, String... tags) {
        var counter = r.find(name).tags(tags).counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void countsAcquisitionsRefusalsAndHeldLocks() {
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(context -> {
            assertThat(context).hasNotFailed();
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            LockManager locks = context.getBean(LockManager.class);
            assertThat(locks).isSameAs(context.getBean(JdbcLockManager.class)); // one bean, metered by its decorator

            LockId a = locks.tryLock("purchase_order", "A", "kim");
            LockId b = locks.tryLock("purchase_order", "B", "kim");
            assertThat(registry.get(MeteredLockManager.HELD).gauge().value()).isEqualTo(2);
            assertThatThrownBy(() -> locks.tryLock("purchase_order", "A", "admin"))
                    .isInstanceOf(OfflineLockHeldException.class)
                    .cause()
                    .isInstanceOf(AlreadyLockedException.class);
            assertThatThrownBy(() -> locks.checkLock(a, "purchase_order", "A", "admin"))
                    .isInstanceOf(OfflineLockLostException.class)
                    .cause()
                    .isInstanceOf(ForeignLockException.class);
            assertThatThrownBy(() -> locks.checkLock(b, "purchase_order", "A", "kim"))
                    .isInstanceOf(OfflineLockLostException.class)
                    .cause()
                    .isInstanceOf(ForeignLockException.class);
            locks.extendLockExpiration(a, "kim", Duration.ofSeconds(5));
            locks.releaseLock(a, "kim");
            assertThatThrownBy(() -> locks.releaseLock(a, "kim"))
                    .isInstanceOf(OfflineLockLostException.class)
                    .cause()
                    .isInstanceOf(LockNotHeldException.class);
            LockId shortLived = locks.tryLock("purchase_order", "C", "kim", Duration.ofMillis(1));
            Thread.sleep(20); // database time moves on; the lock expires
            assertThatThrownBy(() -> locks.extendLockExpiration(shortLived, "kim", Duration.ofSeconds(1)))
                    .isInstanceOf(OfflineLockLostException.class)
                    .cause()
                    .isInstanceOf(LockExpiredException.class);

            assertThat(count(registry, MeteredLockManager.ACQUISITIONS)).isEqualTo(3);
            assertThat(count(registry, MeteredLockManager.RELEASES)).isEqualTo(1);
            assertThat(count(registry, MeteredLockManager.EXTENSIONS)).isEqualTo(1);
            assertThat(count(registry, MeteredLockManager.REFUSALS, "operation", "acquire", "reason", "already_locked"))
                    .isEqualTo(1);
            assertThat(count(registry, MeteredLockManager.REFUSALS, "operation", "check", "reason", "other_owner"))
                    .isEqualTo(1);
            assertThat(count(registry, MeteredLockManager.REFUSALS, "operation", "check", "reason", "other_resource"))
                    .isEqualTo(1);
            assertThat(count(registry, MeteredLockManager.REFUSALS, "operation", "release", "reason", "no_lock"))
                    .isEqualTo(1);
            assertThat(count(registry, MeteredLockManager.REFUSALS, "operation", "extend", "reason", "expired"))
                    .isEqualTo(1);
            assertThat(registry.get(MeteredLockManager.HELD).gauge().value()).isEqualTo(1); // B; C expired
        });
    }

    @Test
    void timesPessimisticLockWaitsAndCountsTimeouts() {
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(context -> {
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            PessimisticLocks locks = context.getBean(PessimisticLocks.class);
            DataSource ds = context.getBean(DataSource.class);
            try (Connection holder = ds.getConnection();
                    Connection waiter = ds.getConnection()) {
                try (Statement s = holder.createStatement()) {
                    s.execute("CREATE TABLE orders_m (order_no VARCHAR(10) PRIMARY KEY)");
                    s.execute("INSERT INTO orders_m VALUES ('A')");
                }
                holder.setAutoCommit(false);
                waiter.setAutoCommit(false);
                assertThat(locks.forUpdate(holder, RowRef.of("orders_m", "order_no", "A"), LockWait.noWait()))
                        .isTrue();
                assertThat(locks.forUpdate(holder, RowRef.of("orders_m", "order_no", "missing"), LockWait.noWait()))
                        .isFalse();
                assertThatThrownBy(() -> locks.forUpdate(
                                waiter,
                                RowRef.of("orders_m", "order_no", "A"),
                                LockWait.atMost(Duration.ofMillis(200))))
                        .isInstanceOf(RowLockTimeoutException.class)
                        .cause()
                        .isInstanceOf(LockTimeoutException.class);
                holder.rollback();
            }
            assertThat(registry.get(PessimisticLockMetrics.WAIT)
                            .tags("table", "orders_m", "outcome", "locked")
                            .timer()
                            .count())
                    .isEqualTo(1);
            assertThat(registry.get(PessimisticLockMetrics.WAIT)
                            .tags("table", "orders_m", "outcome", "absent")
                            .timer()
                            .count())
                    .isEqualTo(1);
            var timeouts = registry.get(PessimisticLockMetrics.WAIT)
                    .tags("table", "orders_m", "outcome", "timeout")
                    .timer();
            assertThat(timeouts.count()).isEqualTo(1);
            assertThat(timeouts.totalTime(java.util.concurrent.TimeUnit.MILLISECONDS))
                    .isGreaterThan(100);
            assertThat(count(registry, PessimisticLockMetrics.TIMEOUTS, "table", "orders_m"))
                    .isEqualTo(1);
        });
    }

    @Test
    void noMetricsWithoutAMeterRegistry() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean("holdfastMeteredLockManager");
            assertThat(context.getBean(LockManager.class)).isInstanceOf(JdbcLockManager.class);
        });
    }

    @Test
    void translatesOfflineLockRefusalsIntoSpringsTree() {
        HoldfastExceptionTranslator translator = new HoldfastExceptionTranslator();
        AlreadyLockedException held = new AlreadyLockedException(
                "purchase_order", "A", "kim", java.time.Instant.EPOCH, java.time.Instant.EPOCH.plusSeconds(60));
        assertThat(translator.translate(held))
                .isInstanceOf(OfflineLockHeldException.class)
                .isInstanceOf(org.springframework.dao.PessimisticLockingFailureException.class)
                .hasCause(held);
        LockNotHeldException lost = new LockNotHeldException();
        assertThat(translator.translate(lost))
                .isInstanceOf(OfflineLockLostException.class)
                .isInstanceOf(org.springframework.dao.PessimisticLockingFailureException.class)
                .hasCause(lost);
    }
}
