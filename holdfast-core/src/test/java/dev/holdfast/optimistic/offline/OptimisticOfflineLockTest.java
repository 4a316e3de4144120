package dev.holdfast.optimistic.offline;

import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.optimistic.Assignments;
import dev.holdfast.optimistic.StaleRow;
import dev.holdfast.optimistic.VersionConflictException;
import dev.holdfast.optimistic.VersionedTable;
import dev.holdfast.pessimistic.RowRef;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.util.Base64;
import java.util.Map;
import java.util.UUID;

import static dev.holdfast.optimistic.VersionedRows.create;
import static dev.holdfast.optimistic.VersionedRows.dialect;
import static dev.holdfast.optimistic.VersionedRows.insert;
import static dev.holdfast.optimistic.VersionedRows.snapshot;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** The contract of {@link OptimisticOfflineLock}, run on every database. */
class OptimisticOfflineLockTest {

    private static final byte[] KEY = "0123456789abcdef0123456789abcdef-test-key".getBytes(StandardCharsets.UTF_8);

    private record Fixture(VersionedTable addresses, VersionedTable invoices, OptimisticOfflineLock offline) {}

    private static Fixture fixture(TestDatabase db, String addressTable, String invoiceTable) {
        VersionedTable addresses = VersionedTable.builder(addressTable)
                .entity("address")
                .dialect(dialect(db))
                .build();
        VersionedTable invoices = VersionedTable.builder(invoiceTable)
                .entity("invoice")
                .dialect(dialect(db))
                .build();
        return new Fixture(
                addresses,
                invoices,
                OptimisticOfflineLock.builder(KEY)
                        .table(addresses)
                        .table(invoices)
                        .build());
    }

    @DatabaseTest
    void anInvoiceComputedFromAnAddressThatChangedMeanwhileIsRefusedAndWritesNothing(TestDatabase db) throws Exception {
        String addressTable = create(db, "addr");
        String invoiceTable = create(db, "inv");
        insert(db, addressTable, 7, "Old Road 1", 3);
        insert(db, invoiceTable, 42, null, 1);
        Fixture f = fixture(db, addressTable, invoiceTable);

        // Request 1 of the invoice run: read the address (v3) and the invoice; keep the state.
        String state;
        try (Connection c = db.connection()) {
            BusinessTransaction tx = f.offline().begin();
            assertThat(tx.read(c, f.addresses(), 7L).orElseThrow().version()).isEqualTo(3);
            tx.read(c, f.invoices(), 42L);
            state = f.offline().seal(tx, "session-1");
        }
        // Another session changes the address: v4.
        try (Connection other = db.connection()) {
            assertThat(f.addresses().update(other, 7L, 3, "kim", Assignments.of("street", "New Street 9")))
                    .isEqualTo(4);
        }
        String addressesBefore = snapshot(db, addressTable);
        String invoicesBefore = snapshot(db, invoiceTable);

        // Request 2: the invoice computed from "Old Road 1" is written and the address only verified.
        BusinessTransaction tx = f.offline().open(state, "session-1");
        tx.write(f.invoices(), 42L, Assignments.of("street", "Old Road 1"));
        VersionConflictException e = catchThrowableOfType(
                VersionConflictException.class, () -> f.offline().commit(db.dataSource(), tx, "invoice-run"));

        assertThat(e).isNotNull();
        assertThat(e.staleRows()).hasSize(1);
        assertThat(e.entity()).isEqualTo("address");
        assertThat(e.id()).isEqualTo(7L);
        assertThat(e.expectedVersion()).isEqualTo(3);
        assertThat(e.currentVersion()).contains(4L);
        assertThat(e.modifiedBy()).contains("kim");
        assertThat(e)
                .hasMessageStartingWith("address 7 was modified by kim at ")
                .hasMessageEndingWith("(version 4, you had 3)");
        assertThat(snapshot(db, invoiceTable)).as("the invoice was not written").isEqualTo(invoicesBefore);
        assertThat(snapshot(db, addressTable)).isEqualTo(addressesBefore);
    }

    @DatabaseTest
    void aConsistentCommitWritesEveryPlannedRowAndLeavesReadRowsAsTheyWere(TestDatabase db) throws Exception {
        String addressTable = create(db, "addr");
        String invoiceTable = create(db, "inv");
        insert(db, addressTable, 7, "Old Road 1", 3);
        insert(db, invoiceTable, 42, null, 1);
        insert(db, invoiceTable, 43, "to delete", 5);
        Fixture f = fixture(db, addressTable, invoiceTable);
        BusinessTransaction tx = f.offline().begin();
        try (Connection c = db.connection()) {
            tx.read(c, f.addresses(), 7L);
            tx.read(c, f.invoices(), 42L);
            tx.read(c, f.invoices(), 43L);
        }
        tx = f.offline().open(f.offline().seal(tx));
        tx.write(f.invoices(), 42L, Assignments.of("street", "Old Road 1").and("counter", 120));
        tx.delete(f.invoices(), 43L);
        String addressesBefore = snapshot(db, addressTable);

        Map<RowRef, Long> versions = f.offline().commit(db.dataSource(), tx, "invoice-run");

        assertThat(versions).containsExactly(Map.entry(RowRef.of(invoiceTable, 42L), 2L));
        assertThat(db.queryString("SELECT street FROM " + invoiceTable + " WHERE id = 42"))
                .isEqualTo("Old Road 1");
        assertThat(db.queryLong("SELECT counter FROM " + invoiceTable + " WHERE id = 42"))
                .isEqualTo(120);
        assertThat(db.queryString("SELECT modified_by FROM " + invoiceTable + " WHERE id = 42"))
                .isEqualTo("invoice-run");
        assertThat(db.queryLong("SELECT COUNT(*) FROM " + invoiceTable + " WHERE id = 43"))
                .isZero();
        assertThat(snapshot(db, addressTable)).isEqualTo(addressesBefore);
    }

    @DatabaseTest
    void everyStaleRowIsReportedAndNothingIsWritten(TestDatabase db) throws Exception {
        String addressTable = create(db, "addr");
        String invoiceTable = create(db, "inv");
        insert(db, addressTable, 1, "a", 1);
        insert(db, addressTable, 2, "b", 1);
        insert(db, invoiceTable, 10, "fresh", 1);
        insert(db, invoiceTable, 11, "stale", 1);
        insert(db, invoiceTable, 12, "gone", 1);
        Fixture f = fixture(db, addressTable, invoiceTable);
        BusinessTransaction tx = f.offline().begin();
        try (Connection c = db.connection()) {
            for (long id : new long[] {1, 2}) {
                tx.read(c, f.addresses(), id);
            }
            for (long id : new long[] {10, 11, 12}) {
                tx.read(c, f.invoices(), id);
            }
            // Meanwhile: address 2 is deleted, invoice 11 changed, invoice 12 deleted.
            f.addresses().delete(c, 2L, 1);
            f.invoices().update(c, 11L, 1, "ann", Assignments.of("street", "ann's"));
            f.invoices().delete(c, 12L, 1);
        }
        tx.write(f.invoices(), 10L, Assignments.of("street", "written?"));
        tx.write(f.invoices(), 11L, Assignments.of("street", "written?"));
        tx.delete(f.invoices(), 12L);
        String addressesBefore = snapshot(db, addressTable);
        String invoicesBefore = snapshot(db, invoiceTable);

        VersionConflictException e = catchThrowableOfType(
                VersionConflictException.class, () -> f.offline().commit(db.dataSource(), tx, "bob"));

        assertThat(e.staleRows())
                .extracting(StaleRow::entity, StaleRow::id, StaleRow::deleted)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("address", 2L, true),
                        org.assertj.core.groups.Tuple.tuple("invoice", 11L, false),
                        org.assertj.core.groups.Tuple.tuple("invoice", 12L, true));
        assertThat(e.getMessage())
                .startsWith("3 stale rows: address 2 was deleted (you had version 1); invoice 11 was modified by ann");
        assertThat(snapshot(db, invoiceTable))
                .as("invoice 10 was not written either")
                .isEqualTo(invoicesBefore);
        assertThat(snapshot(db, addressTable)).isEqualTo(addressesBefore);
    }

    @DatabaseTest
    void aReadRowStaysUnchangedUntilTheCheckingTransactionEnds(TestDatabase db) throws Exception {
        String table = create(db, "addr");
        insert(db, table, 7, "a", 3);
        VersionedTable addresses = VersionedTable.builder(table)
                .entity("address")
                .dialect(dialect(db))
                .build();
        try (Connection checker = db.connection();
                Connection writer = db.connection()) {
            checker.setAutoCommit(false);
            writer.setAutoCommit(false);
            try {
                addresses.verifyUnchanged(checker, 7L, 3);
                // A writer cannot slip in between the check and the commit: the row is locked.
                var locks = dev.holdfast.pessimistic.PessimisticLocks.of(dialect(db));
                assertThatThrownBy(() -> locks.forUpdate(
                                writer,
                                dev.holdfast.pessimistic.RowRef.of(table, 7L),
                                dev.holdfast.pessimistic.LockWait.noWait()))
                        .isInstanceOf(dev.holdfast.pessimistic.LockTimeoutException.class);
                checker.commit();
                assertThat(addresses.update(writer, 7L, 3, "kim", Assignments.none()))
                        .isEqualTo(4);
                writer.commit();
            } finally {
                checker.rollback();
                writer.rollback();
                checker.setAutoCommit(true);
                writer.setAutoCommit(true);
            }
            assertThatThrownBy(() -> addresses.verifyUnchanged(checker, 7L, 4))
                    .isInstanceOf(IllegalStateException.class);
        }
    }

    @DatabaseTest
    void theCommitConnectionGoesBackToThePoolAsItCame(TestDatabase db) throws Exception {
        String addressTable = create(db, "addr");
        String invoiceTable = create(db, "inv");
        insert(db, addressTable, 1, "a", 1);
        Fixture f = fixture(db, addressTable, invoiceTable);
        var pool = db.newPool(1);
        int isolation;
        try (Connection c = pool.getConnection()) {
            isolation = c.getTransactionIsolation();
        }
        BusinessTransaction tx = f.offline().begin().recordRead(f.addresses(), 1L, 1);
        tx.write(f.addresses(), 1L, Assignments.of("street", "b"));
        f.offline().commit(pool, tx, "kim");
        assertThatThrownBy(() -> f.offline().commit(pool, tx, "kim")).isInstanceOf(VersionConflictException.class);
        // An SQL failure half-way: the earlier write of the same commit is rolled back too.
        insert(db, addressTable, 2, "two", 1);
        BusinessTransaction broken =
                f.offline().begin().recordRead(f.addresses(), 1L, 2).recordRead(f.addresses(), 2L, 1);
        broken.write(f.addresses(), 1L, Assignments.of("street", "must not stay"));
        broken.write(f.addresses(), 2L, Assignments.of("no_such_column", 1));
        assertThatThrownBy(() -> f.offline().commit(pool, broken, "kim"))
                .isInstanceOf(dev.holdfast.DatabaseException.class);
        assertThat(db.queryString("SELECT street FROM " + addressTable + " WHERE id = 1"))
                .isEqualTo("b");
        try (Connection c = pool.getConnection()) {
            assertThat(c.getAutoCommit()).isTrue();
            assertThat(c.getTransactionIsolation()).isEqualTo(isolation);
        }
        assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isZero();
    }

    @Test
    void theSealedStateIsCompactAndRoundTrips() {
        VersionedTable a = VersionedTable.builder("address").dialect(Dialect.H2).build();
        VersionedTable b = VersionedTable.builder("invoice").dialect(Dialect.H2).build();
        OptimisticOfflineLock offline =
                OptimisticOfflineLock.builder(KEY).table(a).table(b).build();
        UUID uuid = UUID.randomUUID();
        BusinessTransaction tx = offline.begin()
                .recordRead(a, 7, 3)
                .recordRead(b, 42L, 1)
                .recordRead(b, "INV-2026-0001", 9)
                .recordRead(a, uuid, 2);
        tx.write(b, 42L, Assignments.of("street", "x"));
        String state = offline.seal(tx, "kim");

        assertThat(state).matches("[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+").hasSizeLessThan(150);
        BusinessTransaction back = offline.open(state, "kim");
        assertThat(back.versions()).isEqualTo(tx.versions());
        assertThat(back.writes())
                .as("writes are given in the committing request")
                .isEmpty();
    }

    @Test
    void aForgedOrAlteredStateIsRefused() {
        VersionedTable a = VersionedTable.builder("address").dialect(Dialect.H2).build();
        OptimisticOfflineLock offline =
                OptimisticOfflineLock.builder(KEY).table(a).build();
        String state = offline.seal(offline.begin().recordRead(a, 7L, 3), "kim");
        String payload = state.substring(0, state.indexOf('.'));
        String signature = state.substring(state.indexOf('.') + 1);

        // The client raises the version it read to the current one, to overwrite someone's change.
        byte[] bytes = Base64.getUrlDecoder().decode(payload);
        bytes[bytes.length - 1] = 4; // the version, the last varint byte (3)
        String raised = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes) + "." + signature;
        assertThatThrownBy(() -> offline.open(raised, "kim"))
                .isInstanceOf(TamperedStateException.class)
                .hasMessageContaining("invalid signature");
        // Flipped signature, another binding, another key, garbage, truncation, nothing.
        char last = signature.charAt(signature.length() - 1);
        String flipped = payload + "." + signature.substring(0, signature.length() - 1) + (last == 'A' ? 'B' : 'A');
        assertThatThrownBy(() -> offline.open(flipped, "kim")).isInstanceOf(TamperedStateException.class);
        assertThatThrownBy(() -> offline.open(state, "bob")).isInstanceOf(TamperedStateException.class);
        assertThatThrownBy(() -> offline.open(state)).isInstanceOf(TamperedStateException.class);
        OptimisticOfflineLock otherKey = OptimisticOfflineLock.builder(
                        "another key of at least thirty-two bytes".getBytes(StandardCharsets.UTF_8))
                .table(a)
                .build();
        assertThatThrownBy(() -> otherKey.open(state, "kim")).isInstanceOf(TamperedStateException.class);
        for (String bad : new String[] {
            "",
            "abc",
            "a.b.c",
            "!!!.###",
            payload,
            payload + ".",
            state.substring(0, state.length() - 3),
            "x".repeat(70_000)
        }) {
            assertThatThrownBy(() -> offline.open(bad, "kim"))
                    .as(bad.length() > 40 ? bad.substring(0, 40) : bad)
                    .isInstanceOf(TamperedStateException.class);
        }
        assertThatThrownBy(() -> offline.open(null, "kim")).isInstanceOf(TamperedStateException.class);
        // The genuine state still opens.
        assertThat(offline.open(state, "kim").versions()).containsExactly(Map.entry(RowRef.of("address", 7L), 3L));
    }

    @Test
    void misuseIsRefusedClearly() {
        VersionedTable a = VersionedTable.builder("address").dialect(Dialect.H2).build();
        VersionedTable stranger =
                VersionedTable.builder("other").dialect(Dialect.H2).build();
        OptimisticOfflineLock offline =
                OptimisticOfflineLock.builder(KEY).table(a).build();
        assertThatThrownBy(() -> OptimisticOfflineLock.builder(new byte[31]))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> OptimisticOfflineLock.builder(KEY).build())
                .isInstanceOf(IllegalArgumentException.class);
        BusinessTransaction tx = offline.begin();
        assertThatThrownBy(() -> tx.recordRead(stranger, 1L, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> tx.recordRead(a, 1L, -1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> tx.write(a, 1L, Assignments.none()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("was not read");
        tx.recordRead(a, 1, 3);
        tx.recordRead(a, 1L, 3);
        assertThatThrownBy(() -> tx.recordRead(a, 1L, 4)).isInstanceOf(VersionConflictException.class);
        OptimisticOfflineLock another =
                OptimisticOfflineLock.builder(KEY).table(a).build();
        assertThatThrownBy(() -> another.seal(tx)).isInstanceOf(IllegalArgumentException.class);
        // A state naming a table this lock no longer knows (same key, other configuration).
        OptimisticOfflineLock wider =
                OptimisticOfflineLock.builder(KEY).table(a).table(stranger).build();
        String state = wider.seal(wider.begin().recordRead(stranger, 1L, 1));
        assertThatThrownBy(() -> offline.open(state))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("other");
    }
}
