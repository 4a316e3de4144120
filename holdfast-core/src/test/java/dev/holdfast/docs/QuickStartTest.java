package dev.holdfast.docs;

import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.lease.FencedUpdate;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseGuard;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.optimistic.Assignments;
import dev.holdfast.optimistic.VersionConflictException;
import dev.holdfast.optimistic.VersionedTable;
import dev.holdfast.optimistic.offline.BusinessTransaction;
import dev.holdfast.optimistic.offline.OptimisticOfflineLock;
import dev.holdfast.pessimistic.LockTimeoutException;
import dev.holdfast.pessimistic.LockWait;
import dev.holdfast.pessimistic.PessimisticLocks;
import dev.holdfast.pessimistic.RowRef;
import dev.holdfast.pessimistic.offline.AlreadyLockedException;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.pessimistic.offline.LockNotHeldException;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The README's quick start, run on every database. The tagged regions are the README's code blocks
 * ({@link DocumentationSnippetsTest} checks that they are the same text), so every snippet a user
 * copies compiles and does what the README says.
 */
class QuickStartTest {

    /** A table the examples work on: the user's own, with the three columns versioning needs. */
    private static String purchaseOrders(TestDatabase db) throws SQLException {
        String table = db.newTableName("purchase_order");
        String timestamp = switch (db.kind()) {
            case H2 -> "TIMESTAMP WITH TIME ZONE";
            case POSTGRESQL -> "TIMESTAMPTZ";
            case MARIADB -> "DATETIME(6)";
        };
        db.execute("CREATE TABLE " + table + " (order_no VARCHAR(20) PRIMARY KEY, street VARCHAR(200),"
                + " fence_token BIGINT, report VARCHAR(200),"
                + " version BIGINT NOT NULL, modified_by VARCHAR(100), modified " + timestamp + ")");
        db.execute("INSERT INTO " + table
                + " (order_no, street, version, modified_by) VALUES ('A-1', 'Old Road 1', 6, 'seed')");
        return table;
    }

    private static void installSchema(DataSource dataSource, String lockTable, String leaseTable) {
        // tag::schema[]
        SchemaInstaller schema = new SchemaInstaller(dataSource);
        schema.installClock();                                   // H2 only: the clock function Holdfast's SQL calls
        schema.install(HoldfastTable.OFFLINE_LOCKS, lockTable);  // or run its script with Flyway/Liquibase
        schema.install(HoldfastTable.LEASES, leaseTable);
        // end::schema[]
    }

    @DatabaseTest
    void schemaInstallationIsIdempotentAndBringsTheH2Clock(TestDatabase db) throws Exception {
        String locks = db.newTableName("locks");
        String leases = db.newTableName("leases");
        db.dropAfterTest(leases + "_queue");
        installSchema(db.dataSource(), locks, leases);
        installSchema(db.dataSource(), locks, leases);

        assertThat(db.queryLong("SELECT COUNT(*) FROM " + locks)).isZero();
        assertThat(db.queryLong("SELECT COUNT(*) FROM " + leases)).isZero();
        try (Connection c = db.connection()) {
            assertThat(Dialect.detect(c).now(c)).isNotNull();
        }
    }

    @DatabaseTest
    void aBoundedRowLockIsTakenAndABusyRowTimesOut(TestDatabase db) throws Exception {
        String purchaseOrder = purchaseOrders(db);
        DataSource dataSource = db.dataSource();
        List<String> steps = new ArrayList<>();
        // tag::pessimistic[]
        PessimisticLocks locks = PessimisticLocks.of(dataSource);
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(false);
            locks.forUpdate(connection, RowRef.of(purchaseOrder, "order_no", "A-1"), LockWait.atMost(Duration.ofSeconds(3)));
            // read, decide, write: nobody else changes order A-1 until the commit
            connection.commit();
        }   // LockTimeoutException after 3 s if another transaction keeps the row; the transaction is rolled back
        // end::pessimistic[]
        steps.add("locked and committed");

        try (Connection holder = db.connection();
                Connection other = db.connection()) {
            holder.setAutoCommit(false);
            other.setAutoCommit(false);
            locks.forUpdate(
                    holder, RowRef.of(purchaseOrder, "order_no", "A-1"), LockWait.atMost(Duration.ofSeconds(3)));
            assertThatThrownBy(() -> locks.forUpdate(
                            other,
                            RowRef.of(purchaseOrder, "order_no", "A-1"),
                            LockWait.atMost(Duration.ofMillis(200))))
                    .isInstanceOf(LockTimeoutException.class);
            holder.rollback();
        }
        assertThat(steps).containsExactly("locked and committed");
    }

    @DatabaseTest
    void aVersionedUpdateWinsOnceAndTheStaleOneIsExplained(TestDatabase db) throws Exception {
        String purchaseOrder = purchaseOrders(db);
        DataSource dataSource = db.dataSource();
        new SchemaInstaller(dataSource).installClock();
        long seenVersion = 6; // carried through the form
        // tag::optimistic[]
        VersionedTable orders = VersionedTable.builder(purchaseOrder).entity("order").idColumn("order_no")
                .dialect(Dialect.detect(dataSource)).build();
        try (Connection connection = dataSource.getConnection()) {
            long newVersion = orders.update(connection, "A-1", seenVersion, "kim", Assignments.of("street", "Main 1"));
            // a second submit of version 6 now fails, writes nothing and explains:
            // VersionConflictException "order A-1 was modified by kim at 2026-11-21 14:03 UTC (version 7, you had 6)"
        }
        // end::optimistic[]
        try (Connection connection = db.connection()) {
            VersionConflictException stale = org.assertj.core.api.Assertions.catchThrowableOfType(
                    VersionConflictException.class,
                    () -> orders.update(connection, "A-1", seenVersion, "bob", Assignments.of("street", "Bob Lane 2")));
            assertThat(stale.modifiedBy()).contains("kim");
            assertThat(stale.currentVersion()).contains(7L);
        }
        assertThat(db.queryString("SELECT street FROM " + purchaseOrder + " WHERE order_no = 'A-1'"))
                .isEqualTo("Main 1");
    }

    @DatabaseTest
    void anOfflineLockIsTakenCheckedExtendedAndReleased(TestDatabase db) throws Exception {
        String lockTable = db.newTableName("locks");
        new SchemaInstaller(db.dataSource()).install(HoldfastTable.OFFLINE_LOCKS, lockTable);
        DataSource dataSource = db.dataSource();
        String orderNo = "A-1";
        String user = "kim";
        List<String> page = new ArrayList<>();
        // tag::offline-lock[]
        JdbcLockManager editLocks = JdbcLockManager.builder(dataSource)   // the pool itself, not a transaction-aware proxy
                .table(lockTable)
                .defaultExpiry(Duration.ofMinutes(5))
                .ownerBinding(true)                                       // check, extend and release must name the owner
                .build();

        // the edit page opens: the lock id goes into a hidden form field
        String lockIdField = null;
        try {
            lockIdField = editLocks.tryLock("purchase_order", orderNo, user).getValue();
        } catch (AlreadyLockedException busy) {
            page.add("being edited by " + busy.owner().orElse("someone") + " until " + busy.expiresAt());
        }

        // the page's heartbeat and its submit send the field back
        LockId lockId = LockId.parse(lockIdField);                         // MalformedLockIdException if damaged
        editLocks.extendLockExpiration(lockId, user, Duration.ofMinutes(1));
        editLocks.checkLock(lockId, "purchase_order", orderNo, user);     // LockNotHeldException: do not save
        // ... save the order ...
        editLocks.releaseLock(lockId, user);
        // end::offline-lock[]

        assertThat(page).isEmpty();
        assertThatThrownBy(() -> editLocks.checkLock(lockId, "purchase_order", orderNo, user))
                .isInstanceOf(LockNotHeldException.class);
        LockId other = editLocks.tryLock("purchase_order", orderNo, "bob");
        assertThatThrownBy(() -> editLocks.tryLock("purchase_order", orderNo, user))
                .isInstanceOfSatisfying(
                        AlreadyLockedException.class, e -> assertThat(e.owner()).contains("bob"));
        editLocks.releaseLock(other, "bob");
    }

    @DatabaseTest
    void anOptimisticOfflineLockCommitsOnlyWhatNobodyChangedMeanwhile(TestDatabase db) throws Exception {
        String purchaseOrder = purchaseOrders(db);
        DataSource dataSource = db.dataSource();
        new SchemaInstaller(dataSource).installClock();
        byte[] serverKey = "a server-side secret of 32 bytes or more, never sent"
                .getBytes(java.nio.charset.StandardCharsets.UTF_8);
        String sessionId = "session-1";
        VersionedTable orders = VersionedTable.builder(purchaseOrder)
                .entity("order")
                .idColumn("order_no")
                .dialect(Dialect.detect(dataSource))
                .build();
        // tag::optimistic-offline[]
        OptimisticOfflineLock offline = OptimisticOfflineLock.builder(serverKey).table(orders).build();

        // request 1: read what the business transaction depends on, seal it into the page
        String state;
        try (Connection connection = dataSource.getConnection()) {
            BusinessTransaction tx = offline.begin();
            tx.read(connection, orders, "A-1");                 // records the version read
            state = offline.seal(tx, sessionId);                // HMAC-signed, URL-safe, ~90 characters
        }

        // request 2: the state comes back; write, checked against every version read
        BusinessTransaction tx = offline.open(state, sessionId);    // TamperedStateException if altered
        tx.write(orders, "A-1", Assignments.of("street", "Main 1"));
        offline.commit(dataSource, tx, "kim");                      // VersionConflictException lists every stale row
        // end::optimistic-offline[]

        assertThat(db.queryString("SELECT street FROM " + purchaseOrder + " WHERE order_no = 'A-1'"))
                .isEqualTo("Main 1");
        BusinessTransaction replay = offline.open(state, sessionId);
        replay.write(orders, "A-1", Assignments.of("street", "Bob Lane 2"));
        assertThatThrownBy(() -> offline.commit(dataSource, replay, "bob"))
                .isInstanceOf(VersionConflictException.class);
        assertThat(db.queryString("SELECT street FROM " + purchaseOrder + " WHERE order_no = 'A-1'"))
                .isEqualTo("Main 1");
    }

    @DatabaseTest
    void aLeaseGuardsAFencedWrite(TestDatabase db) throws Exception {
        String purchaseOrder = purchaseOrders(db);
        String leaseTable = db.newTableName("leases");
        db.dropAfterTest(leaseTable + "_queue");
        DataSource dataSource = db.dataSource();
        new SchemaInstaller(dataSource).install(HoldfastTable.LEASES, leaseTable);
        List<Boolean> writes = new ArrayList<>();
        // tag::lease[]
        try (LeaseService leases = LeaseService.builder(dataSource).table(leaseTable).build()) {
            FencedUpdate fence = FencedUpdate.of(purchaseOrder, "order_no", "fence_token", "report");
            Optional<Lease> lease = leases.tryAcquire("nightly-report", "server-7", Duration.ofMinutes(5));
            if (lease.isPresent()) {   // empty: it is held, even by server-7 itself (exclusive per call)
                try (LeaseGuard guard = leases.keepAlive(lease.get(), Duration.ofMinutes(5),
                        lost -> System.getLogger("report").log(System.Logger.Level.ERROR, "lease lost", lost));
                     Connection connection = dataSource.getConnection()) {
                    // ... the work; guard.checkValid() throws LeaseLostException once the lease is lost
                    boolean written = fence.update(connection, guard.token(), "A-1", "done");   // false: a newer holder wrote
                    writes.add(written);
                }   // stops renewing and releases
            }
            Lease report = leases.acquire("report", "server-7", Duration.ofSeconds(30), Duration.ofSeconds(5));  // waits at most 5 s
            leases.release(report);
        }
        // end::lease[]
        assertThat(writes).containsExactly(true);
        assertThat(db.queryString("SELECT report FROM " + purchaseOrder + " WHERE order_no = 'A-1'"))
                .isEqualTo("done");
        assertThat(db.queryLong("SELECT fence_token FROM " + purchaseOrder + " WHERE order_no = 'A-1'"))
                .isPositive();
    }
}
