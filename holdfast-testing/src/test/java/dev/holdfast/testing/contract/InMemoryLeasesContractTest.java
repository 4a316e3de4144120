package dev.holdfast.testing.contract;

import dev.holdfast.lease.Leases;
import dev.holdfast.testing.TestDatabase;

/**
 * A second implementation keeps the {@link Leases} contract with the interface's own
 * {@code keepAlive}: the suite is not written for {@code LeaseService} alone. (It keeps its leases in
 * memory, so each database of the matrix runs the same thing.)
 */
class InMemoryLeasesContractTest extends LeasesContract {

    @Override
    protected Leases leases(TestDatabase db) {
        return new InMemoryLeases();
    }
}
