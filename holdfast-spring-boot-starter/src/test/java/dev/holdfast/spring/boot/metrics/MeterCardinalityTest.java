package dev.holdfast.spring.boot.metrics;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.lease.LeaseTimeoutException;
import dev.holdfast.pessimistic.PessimisticLocks;
import dev.holdfast.spring.boot.HoldfastAutoConfiguration;
import dev.holdfast.spring.boot.observation.HoldfastObservationAutoConfiguration;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.dao.CannotAcquireLockException;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The meters of an application with metrics and observations both on, over a run with many lease names (as with
 * per-entity names: orders, tenants): no tag carries a lease name, the number of meters does not grow with the
 * names, and a row lock is timed once (by the observation's meter handler).
 */
class MeterCardinalityTest {

    private static List<Meter> holdfastMeters(MeterRegistry registry) {
        return registry.getMeters().stream()
                .filter(m -> m.getId().getName().startsWith("holdfast."))
                .toList();
    }

    /** For each name: a grant, a refusal, a blocking acquire that times out, a release. */
    private static void useLeases(LeaseService leases, List<String> names) throws InterruptedException {
        for (String name : names) {
            Lease lease =
                    leases.tryAcquire(name, "server-1", Duration.ofMinutes(1)).orElseThrow();
            assertThat(leases.tryAcquire(name, "server-2", Duration.ofMinutes(1)))
                    .isEmpty();
            assertThatThrownBy(() -> leases.acquire(name, "server-3", Duration.ofMinutes(1), Duration.ZERO))
                    .isInstanceOf(CannotAcquireLockException.class)
                    .cause()
                    .isInstanceOf(LeaseTimeoutException.class);
            leases.release(lease);
        }
    }

    @DatabaseTest
    void noLeaseNameTagsAndAsManyMetersForFewNamesAsForMany(TestDatabase db) throws Exception {
        String leasesTable = db.newTableName("hf_card_leases");
        db.dropAfterTest(leasesTable + "_queue");
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
                            "holdfast.offline.table=" + db.newTableName("hf_card_locks"),
                            "holdfast.lease.table=" + leasesTable)
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        MeterRegistry registry = context.getBean(MeterRegistry.class);
                        LeaseService leases = context.getBean(LeaseService.class);
                        List<String> names = new ArrayList<>(IntStream.rangeClosed(1, 12)
                                .mapToObj(i -> "order-" + (1000 + i))
                                .toList());

                        useLeases(leases, names.subList(0, 2));
                        int afterTwoNames = holdfastMeters(registry).size();
                        useLeases(leases, names.subList(2, names.size()));
                        assertThat(holdfastMeters(registry))
                                .as("meters after %d names", names.size())
                                .hasSize(afterTwoNames);

                        Set<String> tagValues = holdfastMeters(registry).stream()
                                .flatMap(m -> m.getId().getTags().stream())
                                .map(Tag::getValue)
                                .collect(Collectors.toSet());
                        assertThat(tagValues).doesNotContainAnyElementsOf(names);
                        assertThat(registry.get("holdfast.lease.acquisitions")
                                        .counter()
                                        .count())
                                .isEqualTo(names.size());
                        assertThat(registry.get("holdfast.lease.refusals")
                                        .tag("reason", "held")
                                        .counter()
                                        .count())
                                .isEqualTo(names.size());
                        assertThat(registry.get("holdfast.lease.refusals")
                                        .tag("reason", "timeout")
                                        .counter()
                                        .count())
                                .isEqualTo(names.size());

                        // one row lock, one timing: the observation's timer, no second timer of the meters
                        try (Connection c = pool.getConnection()) {
                            c.setAutoCommit(false);
                            assertThat(context.getBean(PessimisticLocks.class)
                                            .forUpdate(c, leasesTable, "name", names.get(0), Duration.ofSeconds(5)))
                                    .isTrue();
                            c.rollback();
                        }
                        long timings = holdfastMeters(registry).stream()
                                .filter(m -> m instanceof Timer)
                                .filter(m -> m.getId().getName().startsWith("holdfast.pessimistic."))
                                .mapToLong(m -> ((Timer) m).count())
                                .sum();
                        assertThat(timings).isEqualTo(1);
                        assertThat(registry.find(PessimisticLockMetrics.WAIT).meters())
                                .isEmpty();
                    });
        }
    }
}
