package dev.holdfast.optimistic.offline;

import dev.holdfast.internal.Arguments;
import dev.holdfast.optimistic.Assignments;
import dev.holdfast.optimistic.StaleRow;
import dev.holdfast.optimistic.VersionConflictException;
import dev.holdfast.optimistic.VersionStamp;
import dev.holdfast.optimistic.VersionedTable;
import dev.holdfast.pessimistic.RowRef;
import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.util.Collections;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What a business transaction spanning several requests has read (rows and the versions it saw)
 * and, in its last request, what it will write. Created by {@link OptimisticOfflineLock#begin()}
 * or restored by {@link OptimisticOfflineLock#open(String)}; committed by
 * {@link OptimisticOfflineLock#commit}. Not thread-safe: one per user interaction.
 *
 * <p>Writes use the version recorded when the row was read, so a row must be read before it is
 * written. Every recorded row that is not written is verified unchanged at commit.
 */
public final class BusinessTransaction {

    /** What the commit does with one row. */
    enum Action {
        VERIFY,
        UPDATE,
        DELETE
    }

    record Entry(
            VersionedTable table,
            Object id,
            long version,
            Action action,
            @Nullable Assignments changes) {}

    private final RegisteredTables tables;
    private final TreeMap<RowRef, Entry> rows = new TreeMap<>();

    BusinessTransaction(RegisteredTables tables) {
        this.tables = tables;
    }

    /**
     * Reads a row's stamp on {@code connection} and records its version, as
     * {@link VersionedTable#read} and {@link #recordRead} do.
     *
     * @param connection the connection to read on, in its transaction if it has one; not null
     * @param table      a table registered with the lock that began this business transaction
     * @param id         the row's key, as {@link VersionedTable#key(Object)} takes it
     * @return the row's stamp, or empty if there is no such row (nothing is recorded then)
     * @throws VersionConflictException if the row was recorded before with another version
     * @throws IllegalArgumentException for an unregistered table, a null connection or a bad id
     * @throws dev.holdfast.DatabaseException if the SELECT fails; a transaction is then rolled back
     */
    public Optional<VersionStamp> read(Connection connection, VersionedTable table, Object id) {
        Optional<VersionStamp> stamp = tables.registered(table).read(connection, id);
        stamp.ifPresent(s -> recordRead(table, id, s.version()));
        return stamp;
    }

    /**
     * Records that the business transaction read version {@code version} of a row (loaded by the
     * caller, e.g. through JPA). Recording the same row again with the same version does nothing.
     *
     * @param table   a table registered with the lock that began this business transaction
     * @param id      the row's key, as {@link VersionedTable#key(Object)} takes it
     * @param version the version the caller read; not negative
     * @return this business transaction
     * @throws VersionConflictException if the row was recorded before with another version: the
     *                                  business transaction has already seen two states of it
     * @throws IllegalArgumentException for an unregistered table, a bad id or a negative version
     */
    public BusinessTransaction recordRead(VersionedTable table, Object id, long version) {
        VersionedTable registered = tables.registered(table);
        if (version < 0) {
            throw new IllegalArgumentException("a version must not be negative, was " + version);
        }
        RowRef row = registered.row(id);
        Entry known = rows.get(row);
        if (known != null) {
            if (known.version() != version) {
                throw new VersionConflictException(StaleRow.changed(
                        registered.entity(), row.key(), known.version(), new VersionStamp(version, null, null)));
            }
            return this;
        }
        rows.put(row, new Entry(registered, row.key(), version, Action.VERIFY, null));
        return this;
    }

    /**
     * Plans a conditional update of a row read earlier, at the version then read. It replaces a
     * write or delete planned before for the same row. The columns are checked at commit.
     *
     * @param table   a table registered with the lock that began this business transaction
     * @param id      the row's key, as {@link VersionedTable#key(Object)} takes it
     * @param changes the columns to set, as {@link VersionedTable#update} takes them; not null
     * @return this business transaction
     * @throws IllegalStateException    if the row was not read in this business transaction
     * @throws IllegalArgumentException for null changes, an unregistered table or a bad id
     */
    public BusinessTransaction write(VersionedTable table, Object id, Assignments changes) {
        Arguments.notNull(changes, "changes");
        return plan(table, id, Action.UPDATE, changes);
    }

    /**
     * Plans a conditional delete of a row read earlier, at the version then read. It replaces a
     * write planned before for the same row.
     *
     * @param table a table registered with the lock that began this business transaction
     * @param id    the row's key, as {@link VersionedTable#key(Object)} takes it
     * @return this business transaction
     * @throws IllegalStateException    if the row was not read in this business transaction
     * @throws IllegalArgumentException for an unregistered table or a bad id
     */
    public BusinessTransaction delete(VersionedTable table, Object id) {
        return plan(table, id, Action.DELETE, null);
    }

    private BusinessTransaction plan(VersionedTable table, Object id, Action action, @Nullable Assignments changes) {
        RowRef row = tables.registered(table).row(id);
        Entry known = rows.get(row);
        if (known == null) {
            throw new IllegalStateException(row + " was not read in this business transaction:"
                    + " only a row whose version was recorded can be written");
        }
        rows.put(row, new Entry(known.table(), known.id(), known.version(), action, changes));
        return this;
    }

    /** {@return the recorded version of every row, in commit order; an unmodifiable copy} */
    public Map<RowRef, Long> versions() {
        Map<RowRef, Long> versions = new TreeMap<>();
        rows.forEach((row, entry) -> versions.put(row, entry.version()));
        return Collections.unmodifiableMap(versions);
    }

    /** {@return the rows that will be written (updated or deleted) at commit, in commit order; an unmodifiable copy} */
    public java.util.Set<RowRef> writes() {
        java.util.Set<RowRef> writes = new java.util.TreeSet<>();
        rows.forEach((row, entry) -> {
            if (entry.action() != Action.VERIFY) {
                writes.add(row);
            }
        });
        return Collections.unmodifiableSet(writes);
    }

    Map<RowRef, Entry> entries() {
        return Collections.unmodifiableMap(rows);
    }

    /** The tables of the lock that began it. */
    RegisteredTables tables() {
        return tables;
    }

    @Override
    public String toString() {
        return "BusinessTransaction" + versions() + " writing " + writes();
    }
}
