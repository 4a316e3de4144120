package dev.holdfast.spring.boot.observation;

import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.lease.Leases;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.pessimistic.offline.LockManager;
import dev.holdfast.testing.TestDatabase;
import dev.holdfast.testing.contract.LeasesContract;
import dev.holdfast.testing.contract.LockManagerContract;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.Nested;

/**
 * The observed decorators keep the contracts of what they decorate, observed by a {@link TestObservationRegistry}
 * (which also checks that every observation is started, scoped and stopped in order).
 */
class ObservedContractTest {

    @Nested
    class ObservedLockManagerKeepsTheLockManagerContract extends LockManagerContract {
        @Override
        protected LockManager lockManager(TestDatabase db) {
            String table = db.newTableName("observed_locks");
            new SchemaInstaller(db.dataSource()).install(HoldfastTable.OFFLINE_LOCKS, table);
            JdbcLockManager locks =
                    JdbcLockManager.builder(db.dataSource()).table(table).build();
            return new ObservedLockManager(locks, TestObservationRegistry.create(), locks.dialect());
        }
    }

    @Nested
    class ObservedLeasesKeepTheLeasesContract extends LeasesContract {
        @Override
        protected Leases leases(TestDatabase db) {
            String table = db.newTableName("observed_leases");
            db.dropAfterTest(table + "_queue");
            new SchemaInstaller(db.dataSource()).install(HoldfastTable.LEASES, table);
            TestObservationRegistry registry = TestObservationRegistry.create();
            LeaseService leases = LeaseService.builder(db.dataSource())
                    .table(table)
                    .onGrant(ObservedLeases.grantListener(registry))
                    .build();
            return new ObservedLeases(leases, registry, Dialect.detect(db.dataSource()));
        }
    }
}
