package dev.holdfast.spring.boot;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.lease.Leases;
import dev.holdfast.pessimistic.PessimisticLocks;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.pessimistic.offline.LockManager;
import dev.holdfast.spring.boot.metrics.HoldfastMetricsAutoConfiguration;
import dev.holdfast.spring.boot.observation.HoldfastObservationAutoConfiguration;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import java.sql.Connection;
import java.time.Duration;
import java.util.function.Consumer;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Whichever Holdfast type an application injects, its calls are metered and observed: the starter's beans with
 * calls to instrument are the {@code LeaseService} (also a {@code Leases}), the {@code JdbcLockManager} (also a
 * {@code LockManager}) and {@code PessimisticLocks}. Each type is taken from the context, called once, and the
 * call is found in the counter of the meters and in the timer Boot's meter handler makes of the observation.
 */
class InjectedBeanInstrumentationTest {

    private static double counted(MeterRegistry registry, String name) {
        return registry.find(name).counters().stream()
                .mapToDouble(Counter::count)
                .sum();
    }

    private static long observed(MeterRegistry registry, String name) {
        return registry.find(name).timers().stream().mapToLong(Timer::count).sum();
    }

    @DatabaseTest
    void everyInjectableTypeIsMeteredAndObserved(TestDatabase db) throws Exception {
        String leasesTable = db.newTableName("hf_inj_leases");
        db.dropAfterTest(leasesTable + "_queue");
        String locksTable = db.newTableName("hf_inj_locks");
        try (HikariDataSource pool = db.newPool(4)) {
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(
                            HoldfastAutoConfiguration.class,
                            HoldfastMetricsAutoConfiguration.class,
                            HoldfastObservationAutoConfiguration.class,
                            MetricsAutoConfiguration.class,
                            SimpleMetricsExportAutoConfiguration.class,
                            ObservationAutoConfiguration.class))
                    .withBean(DataSource.class, () -> pool)
                    .withPropertyValues(
                            "holdfast.jdbc.initialize-schema=always",
                            "holdfast.offline.table=" + locksTable,
                            "holdfast.lease.table=" + leasesTable)
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        MeterRegistry registry = context.getBean(MeterRegistry.class);

                        callOnce(
                                context,
                                LeaseService.class,
                                registry,
                                "holdfast.lease.acquisitions",
                                "holdfast.lease.acquire",
                                leases -> assertThat(leases.tryAcquire("by-service", "server-1", Duration.ofMinutes(1)))
                                        .isPresent());
                        callOnce(
                                context,
                                Leases.class,
                                registry,
                                "holdfast.lease.acquisitions",
                                "holdfast.lease.acquire",
                                leases -> assertThat(
                                                leases.tryAcquire("by-interface", "server-1", Duration.ofMinutes(1)))
                                        .isPresent());
                        callOnce(
                                context,
                                JdbcLockManager.class,
                                registry,
                                "holdfast.offline.lock.acquisitions",
                                "holdfast.offline.lock",
                                locks -> locks.tryLock("order", "1", "kim"));
                        callOnce(
                                context,
                                LockManager.class,
                                registry,
                                "holdfast.offline.lock.acquisitions",
                                "holdfast.offline.lock",
                                locks -> locks.tryLock("order", "2", "kim"));

                        PessimisticLocks rowLocks = context.getBean(PessimisticLocks.class);
                        long before = observed(registry, "holdfast.pessimistic.lock");
                        try (Connection c = pool.getConnection()) {
                            c.setAutoCommit(false);
                            assertThat(rowLocks.forUpdate(c, leasesTable, "name", "by-service", Duration.ofSeconds(5)))
                                    .isTrue();
                            c.rollback();
                        }
                        assertThat(observed(registry, "holdfast.pessimistic.lock") - before)
                                .as("PessimisticLocks observed")
                                .isEqualTo(1);

                        assertThat(context.getBean(Leases.class)).isSameAs(context.getBean(LeaseService.class));
                        assertThat(context.getBean(LockManager.class)).isSameAs(context.getBean(JdbcLockManager.class));
                    });
        }
    }

    private static <T> void callOnce(
            ApplicationContext context,
            Class<T> type,
            MeterRegistry registry,
            String counter,
            String observation,
            Consumer<T> call) {
        double counted = counted(registry, counter);
        long observed = observed(registry, observation);
        call.accept(context.getBean(type));
        assertThat(counted(registry, counter) - counted)
                .as(type.getSimpleName() + " metered")
                .isEqualTo(1);
        assertThat(observed(registry, observation) - observed)
                .as(type.getSimpleName() + " observed")
                .isEqualTo(1);
    }
}
