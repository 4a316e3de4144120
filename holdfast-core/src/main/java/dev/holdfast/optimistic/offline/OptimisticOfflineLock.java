package dev.holdfast.optimistic.offline;

import dev.holdfast.DatabaseException;
import dev.holdfast.internal.Arguments;
import dev.holdfast.internal.Invariants;
import dev.holdfast.jdbc.internal.Jdbc;
import dev.holdfast.optimistic.StaleRow;
import dev.holdfast.optimistic.VersionConflictException;
import dev.holdfast.optimistic.VersionedTable;
import dev.holdfast.pessimistic.RowRef;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.sql.DataSource;

/**
 * Fowler's Optimistic Offline Lock: a business transaction that spans several requests records
 * the versions of the rows it read; its commit, in one database transaction, writes every changed
 * row conditionally on the version read and verifies that every row only read is unchanged, so
 * that neither a lost update nor an inconsistent read (an invoice computed from an address that
 * changed meanwhile) can commit.
 *
 * <pre>{@code
 * OptimisticOfflineLock offline = OptimisticOfflineLock.builder(serverKey).table(addresses).table(invoices).build();
 * // request 1: read, then keep the state in the session or a hidden form field
 * BusinessTransaction tx = offline.begin();
 * tx.read(connection, addresses, addressId);
 * tx.read(connection, invoices, invoiceId);
 * String state = offline.seal(tx, session.getId());
 * // request 2: restore, plan the writes, commit
 * BusinessTransaction tx = offline.open(state, session.getId());
 * tx.write(invoices, invoiceId, Assignments.of("amount", total));
 * offline.commit(dataSource, tx, "kim");
 * }</pre>
 *
 * <p>The sealed state carries only table names, keys and versions, signed with HMAC-SHA256 under
 * the server key: a client can read it but cannot change a version without
 * {@link TamperedStateException}. Values to write are given in the committing request.
 *
 * <p>Immutable and thread-safe; keep one per application.
 */
public final class OptimisticOfflineLock {

    /** Shortest server key accepted: the HMAC-SHA256 block of security. */
    public static final int MIN_KEY_BYTES = 32;

    private final StateCodec codec;
    private final RegisteredTables tables;

    private OptimisticOfflineLock(byte[] key, Map<String, VersionedTable> tables) {
        this.codec = new StateCodec(key);
        this.tables = new RegisteredTables(tables);
    }

    /**
     * Starts configuring an optimistic offline lock.
     *
     * @param serverKey the secret that signs sealed states, at least {@value #MIN_KEY_BYTES} bytes
     *                  (copied); all servers of a cluster need the same key
     * @return a new builder
     * @throws IllegalArgumentException if the key is null or too short
     */
    public static Builder builder(byte[] serverKey) {
        if (serverKey == null || serverKey.length < MIN_KEY_BYTES) {
            throw new IllegalArgumentException("the server key must have at least " + MIN_KEY_BYTES + " bytes");
        }
        return new Builder(serverKey.clone());
    }

    /** {@return a new, empty business transaction of this lock} */
    public BusinessTransaction begin() {
        return new BusinessTransaction(tables);
    }

    /**
     * {@link #seal(BusinessTransaction, String)} with no binding: the state opens with {@link #open(String)}.
     *
     * @param tx a business transaction this lock began or opened
     * @return the sealed state
     * @throws IllegalArgumentException if {@code tx} is null or belongs to another optimistic offline lock
     */
    public String seal(BusinessTransaction tx) {
        return seal(tx, "");
    }

    /**
     * The recorded versions of {@code tx} as a compact, URL-safe, signed string for a session or a
     * hidden form field (a few characters per row and per table name, plus 44 for the signature).
     * Planned writes are not included.
     *
     * @param tx      a business transaction this lock began or opened
     * @param binding what the state may only be opened with, e.g. the user's name or session id
     *                ({@code ""} for none); not null
     * @return the sealed state
     * @throws IllegalArgumentException if {@code tx} or {@code binding} is null, or {@code tx} belongs to another
     *                                  optimistic offline lock
     */
    public String seal(BusinessTransaction tx, String binding) {
        own(tx);
        return codec.seal(tx.versions(), Arguments.notNull(binding, "binding"));
    }

    /**
     * {@link #open(String, String)} with no binding, for a state sealed with {@link #seal(BusinessTransaction)}.
     *
     * @param state the sealed state, as the client sent it back
     * @return the restored business transaction, with the recorded versions and no planned writes
     * @throws TamperedStateException   if the state is null or empty, or does not verify under this key without
     *                                  a binding
     * @throws IllegalArgumentException if it names a table this lock does not know (a configuration change)
     */
    public BusinessTransaction open(String state) {
        return open(state, "");
    }

    /**
     * Restores a business transaction from {@link #seal}.
     *
     * @param state   the sealed state, as the client sent it back
     * @param binding the binding it was sealed with ({@code ""} for none); not null
     * @return the restored business transaction, with the recorded versions and no planned writes
     * @throws TamperedStateException   if the state is null or empty, or does not verify under this key and binding
     * @throws IllegalArgumentException if {@code binding} is null, or the state names a table this lock does not
     *                                  know (a configuration change)
     */
    public BusinessTransaction open(String state, String binding) {
        BusinessTransaction tx = begin();
        codec.open(state, Arguments.notNull(binding, "binding"), (tableName, id, version) -> {
            VersionedTable table = tables.named(tableName);
            if (table == null) {
                throw new IllegalArgumentException(
                        "the state names table " + tableName + ", which this lock does not know");
            }
            tx.recordRead(table, id, version);
        });
        return tx;
    }

    /**
     * Commits {@code tx} in one database transaction on a connection of its own, at READ COMMITTED:
     * in one global row order, every planned write is applied conditionally on the version read
     * ({@link VersionedTable#update}, {@link VersionedTable#delete}), and every row only read is
     * verified unchanged and kept so with a shared row lock until the commit
     * ({@link VersionedTable#verifyUnchanged}). If any row is stale, everything is rolled back and
     * the exception lists every stale row.
     *
     * @param dataSource where to take the connection from; not null
     * @param tx         a business transaction this lock began or opened
     * @param modifiedBy stored in {@code modified_by} of every written row; not null or blank
     * @return the new version of every updated row, in commit order (deleted and verified rows are not
     *         included); an unmodifiable map
     * @throws VersionConflictException if any row changed or was deleted since it was read; nothing was written
     * @throws IllegalArgumentException if an argument is null, {@code modifiedBy} is blank, {@code tx} belongs to
     *                                  another optimistic offline lock, or a planned write assigns a column the
     *                                  versioned table manages; nothing was written
     * @throws DatabaseException        for any other database failure; nothing was written
     */
    public Map<RowRef, Long> commit(DataSource dataSource, BusinessTransaction tx, String modifiedBy) {
        Arguments.notNull(dataSource, "dataSource");
        own(tx);
        if (modifiedBy == null || modifiedBy.isBlank()) {
            throw new IllegalArgumentException("modifiedBy must not be null or blank");
        }
        return Jdbc.transaction(
                dataSource,
                Connection.TRANSACTION_READ_COMMITTED,
                "committing a business transaction",
                connection -> commit(connection, tx, modifiedBy));
    }

    private static Map<RowRef, Long> commit(Connection connection, BusinessTransaction tx, String modifiedBy)
            throws SQLException {
        List<StaleRow> stale = new ArrayList<>();
        Map<RowRef, Long> newVersions = new LinkedHashMap<>();
        for (Map.Entry<RowRef, BusinessTransaction.Entry> e : tx.entries().entrySet()) {
            BusinessTransaction.Entry entry = e.getValue();
            VersionedTable table = entry.table();
            try {
                switch (entry.action()) {
                    case UPDATE ->
                        newVersions.put(
                                e.getKey(),
                                table.update(
                                        connection,
                                        entry.id(),
                                        entry.version(),
                                        modifiedBy,
                                        // write(..) plans every UPDATE with its changes
                                        Invariants.nonNull(
                                                entry.changes(), "write(..) plans every UPDATE with its changes")));
                    case DELETE -> table.delete(connection, entry.id(), entry.version());
                    case VERIFY -> table.verifyUnchanged(connection, entry.id(), entry.version());
                }
            } catch (VersionConflictException conflict) {
                // Keep going: the user is told about every stale row at once.
                stale.addAll(conflict.staleRows());
            }
        }
        if (!stale.isEmpty()) {
            connection.rollback();
            throw new VersionConflictException(stale);
        }
        connection.commit();
        return Collections.unmodifiableMap(newVersions);
    }

    private void own(BusinessTransaction tx) {
        Arguments.notNull(tx, "tx");
        if (tx.tables() != tables) {
            throw new IllegalArgumentException("the business transaction belongs to another optimistic offline lock");
        }
    }

    /** Configures an {@link OptimisticOfflineLock}. */
    public static final class Builder {
        private final byte[] key;
        private final Map<String, VersionedTable> tables = new TreeMap<>();

        private Builder(byte[] key) {
            this.key = key;
        }

        /**
         * Registers a table whose rows business transactions may read and write. Registering the same
         * instance again does nothing.
         *
         * @param table the versioned table; not null. Its name, exactly as configured, is what sealed states
         *              name it by
         * @return this builder
         * @throws IllegalArgumentException if {@code table} is null, or another table of the same name is registered
         */
        public Builder table(VersionedTable table) {
            Arguments.notNull(table, "table");
            VersionedTable previous = tables.putIfAbsent(table.table().value(), table);
            if (previous != null && previous != table) {
                throw new IllegalArgumentException("table " + table.table() + " is registered twice");
            }
            return this;
        }

        /**
         * Builds the optimistic offline lock.
         *
         * @return the optimistic offline lock
         * @throws IllegalArgumentException if no table was registered
         */
        public OptimisticOfflineLock build() {
            if (tables.isEmpty()) {
                throw new IllegalArgumentException("register at least one table");
            }
            return new OptimisticOfflineLock(key, Map.copyOf(tables));
        }
    }
}
