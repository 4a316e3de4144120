package dev.holdfast.spring.boot.shedlock;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.shedlock.HoldfastLockProvider;
import dev.holdfast.spring.boot.HoldfastAutoConfiguration;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ShedLock {@link LockProvider} the starter configures: a {@link HoldfastLockProvider} on the auto-configured
 * {@link LeaseService} when the application has none, whose locks are leases; none when the application defines
 * its own {@code LockProvider}, or without holdfast-shedlock.
 */
class HoldfastShedLockAutoConfigurationTest {

    private static ApplicationContextRunner runner(HikariDataSource pool, TestDatabase db, String leasesTable) {
        return new ApplicationContextRunner()
                .withConfiguration(
                        AutoConfigurations.of(HoldfastAutoConfiguration.class, HoldfastShedLockAutoConfiguration.class))
                .withBean(DataSource.class, () -> pool)
                .withPropertyValues(
                        "holdfast.jdbc.initialize-schema=always",
                        "holdfast.offline.table=" + db.newTableName("hf_shed_locks"),
                        "holdfast.lease.table=" + leasesTable);
    }

    @DatabaseTest
    void aLockingTaskExecutorTakesTheLeaseOfTheLock(TestDatabase db) throws Exception {
        String leasesTable = db.newTableName("hf_shed_leases");
        db.dropAfterTest(leasesTable + "_queue");
        try (HikariDataSource pool = db.newPool(4)) {
            runner(pool, db, leasesTable).run(context -> {
                assertThat(context).hasNotFailed().hasSingleBean(LockProvider.class);
                assertThat(context.getBean(LockProvider.class)).isInstanceOf(HoldfastLockProvider.class);
                LeaseService leases = context.getBean(LeaseService.class);
                LockingTaskExecutor executor = new DefaultLockingTaskExecutor(context.getBean(LockProvider.class));
                AtomicReference<Optional<Lease>> otherWhileRunning = new AtomicReference<>();

                executor.executeWithLock(
                        (Runnable) () -> otherWhileRunning.set(
                                leases.tryAcquire("nightly-report", "another-node", Duration.ofMinutes(1))),
                        new LockConfiguration(Instant.now(), "nightly-report", Duration.ofMinutes(1), Duration.ZERO));

                assertThat(otherWhileRunning.get())
                        .as("the task ran holding the lease")
                        .isEmpty();
                Lease afterwards = leases.tryAcquire("nightly-report", "another-node", Duration.ofMinutes(1))
                        .orElseThrow();
                assertThat(afterwards.token())
                        .as("released after the task, after the task's grant")
                        .isGreaterThan(1);
                leases.release(afterwards);

                // A lock whose lease an operator broke cannot be extended: the service's Spring exception, read
                // by the provider as the loss it is
                SimpleLock held = context.getBean(LockProvider.class)
                        .lock(new LockConfiguration(
                                Instant.now(), "nightly-report", Duration.ofMinutes(1), Duration.ZERO))
                        .orElseThrow();
                assertThat(leases.forceRelease("nightly-report", "operator")).isTrue();
                assertThat(held.extend(Duration.ofMinutes(2), Duration.ZERO)).isEmpty();
            });
        }
    }

    @DatabaseTest(only = TestDatabase.Kind.H2)
    void backsOffForTheApplicationsLockProviderOrWithoutHoldfastShedLock(TestDatabase db) throws Exception {
        String leasesTable = db.newTableName("hf_shed_leases");
        db.dropAfterTest(leasesTable + "_queue");
        LockProvider own = config -> Optional.empty();
        try (HikariDataSource pool = db.newPool(4)) { // closed with its context, as the DataSource bean
            runner(pool, db, leasesTable)
                    .withBean(LockProvider.class, () -> own)
                    .run(context -> {
                        assertThat(context)
                                .hasNotFailed()
                                .hasSingleBean(LockProvider.class)
                                .doesNotHaveBean(HoldfastLockProvider.class);
                        assertThat(context.getBean(LockProvider.class)).isSameAs(own);
                    });
        }
        try (HikariDataSource pool = db.newPool(4)) {
            runner(pool, db, leasesTable)
                    .withClassLoader(new FilteredClassLoader(HoldfastLockProvider.class))
                    .run(context -> assertThat(context)
                            .hasNotFailed()
                            .doesNotHaveBean(LockProvider.class)
                            .hasSingleBean(LeaseService.class));
        }
    }
}
