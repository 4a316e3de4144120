package dev.holdfast.testing.contract;

import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.lease.Leases;
import dev.holdfast.testing.TestDatabase;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A decorator that forwards every call but {@code keepAlive} keeps the {@link Leases} contract: the
 * interface's own {@code keepAlive} guards the lease through the decorator's {@code renew} and
 * {@code release}, so any implementation offers keep-alive.
 */
class ForwardingLeasesContractTest extends LeasesContract {

    @Override
    protected Leases leases(TestDatabase db) {
        String table = db.newTableName("contract_fwd_leases");
        db.dropAfterTest(table + "_queue");
        new SchemaInstaller(db.dataSource()).install(HoldfastTable.LEASES, table);
        return new Forwarding(LeaseService.builder(db.dataSource()).table(table).build());
    }

    /** Forwards everything except {@link Leases#keepAlive}, which it inherits. */
    private record Forwarding(Leases target) implements Leases {

        @Override
        public Optional<Lease> tryAcquire(String name, String owner, Duration ttl) {
            return target.tryAcquire(name, owner, ttl);
        }

        @Override
        public Optional<Lease> tryAcquireOrRenew(String name, String owner, Duration ttl) {
            return target.tryAcquireOrRenew(name, owner, ttl);
        }

        @Override
        public Lease acquire(String name, String owner, Duration ttl, Duration maxWait) throws InterruptedException {
            return target.acquire(name, owner, ttl, maxWait);
        }

        @Override
        public Lease renew(Lease lease, Duration ttl) {
            return target.renew(lease, ttl);
        }

        @Override
        public void release(Lease lease) {
            target.release(lease);
        }

        @Override
        public void release(Lease lease, Duration heldAtLeast) {
            target.release(lease, heldAtLeast);
        }

        @Override
        public void unlock(String name, String owner) {
            target.unlock(name, owner);
        }

        @Override
        public List<Lease> list() {
            return target.list();
        }

        @Override
        public Optional<Lease> find(String name) {
            return target.find(name);
        }

        @Override
        public boolean forceRelease(String name) {
            return target.forceRelease(name);
        }

        @Override
        public boolean forceRelease(String name, String by) {
            return target.forceRelease(name, by);
        }

        @Override
        public void close() {
            target.close();
        }
    }
}
