package dev.holdfast.testing.contract;

import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.lease.Leases;
import dev.holdfast.testing.TestDatabase;

/** Holdfast's JDBC lease service keeps the {@link Leases} contract. */
// tag::leases-contract[]
class LeaseServiceContractTest extends LeasesContract {

    @Override
    protected Leases leases(TestDatabase db) {
        String table = db.newTableName("contract_leases");   // a table of its own per test, dropped after it
        db.dropAfterTest(table + "_queue");
        new SchemaInstaller(db.dataSource()).install(HoldfastTable.LEASES, table);
        return LeaseService.builder(db.dataSource()).table(table).build();
    }
}
// end::leases-contract[]
