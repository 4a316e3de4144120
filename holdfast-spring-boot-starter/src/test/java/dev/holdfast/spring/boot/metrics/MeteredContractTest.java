package dev.holdfast.spring.boot.metrics;

import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.lease.Leases;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.pessimistic.offline.LockManager;
import dev.holdfast.testing.TestDatabase;
import dev.holdfast.testing.contract.LeasesContract;
import dev.holdfast.testing.contract.LockManagerContract;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Nested;

/** The metered decorators keep the contracts of what they decorate. */
class MeteredContractTest {

    @Nested
    class MeteredLockManagerKeepsTheLockManagerContract extends LockManagerContract {
        @Override
        protected LockManager lockManager(TestDatabase db) {
            String table = db.newTableName("metered_locks");
            new SchemaInstaller(db.dataSource()).install(HoldfastTable.OFFLINE_LOCKS, table);
            return new MeteredLockManager(
                    JdbcLockManager.builder(db.dataSource()).table(table).build(), new SimpleMeterRegistry());
        }
    }

    @Nested
    class MeteredLeasesKeepTheLeasesContract extends LeasesContract {
        @Override
        protected Leases leases(TestDatabase db) {
            String table = db.newTableName("metered_leases");
            db.dropAfterTest(table + "_queue");
            new SchemaInstaller(db.dataSource()).install(HoldfastTable.LEASES, table);
            return new MeteredLeases(
                    LeaseService.builder(db.dataSource()).table(table).build(), new SimpleMeterRegistry());
        }
    }
}
