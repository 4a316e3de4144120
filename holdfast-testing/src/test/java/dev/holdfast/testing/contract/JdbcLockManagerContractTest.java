package dev.holdfast.testing.contract;

import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.pessimistic.offline.LockManager;
import dev.holdfast.testing.TestDatabase;

/** Holdfast's JDBC lock manager keeps the {@link LockManager} contract. */
class JdbcLockManagerContractTest extends LockManagerContract {

    @Override
    protected LockManager lockManager(TestDatabase db) {
        String table = db.newTableName("contract_locks");
        new SchemaInstaller(db.dataSource()).install(HoldfastTable.OFFLINE_LOCKS, table);
        return JdbcLockManager.builder(db.dataSource()).table(table).build();
    }
}
