package dev.holdfast.shedlock;

import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;

/** The README's ShedLock example, run on every database. */
class ReadmeExampleTest {

    @DatabaseTest
    void aShedLockJobRunsOnOneNodeAtATime(TestDatabase db) {
        DataSource dataSource = db.dataSource();
        new SchemaInstaller(dataSource).install(HoldfastTable.LEASES);
        try (LeaseService leases = LeaseService.builder(dataSource).build()) {
            // tag::shedlock[]
            LockProvider lockProvider = new HoldfastLockProvider(leases);   // leases: a LeaseService, e.g. the starter's bean
            // end::shedlock[]
            String job = "readme-job-" + UUID.randomUUID();
            LockConfiguration config = new LockConfiguration(Instant.now(), job, Duration.ofSeconds(30), Duration.ZERO);
            Optional<SimpleLock> first = lockProvider.lock(config);
            assertThat(first).isPresent();
            assertThat(lockProvider.lock(config)).isEmpty();
            first.get().unlock();
            Optional<SimpleLock> again = lockProvider.lock(config);
            assertThat(again).isPresent();
            again.get().unlock();
        }
    }
}
