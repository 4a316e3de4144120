package dev.holdfast.lease.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;

/**
 * The multi-row statements of a database where concurrent calls can commit together ({@link Batcher}):
 * PostgreSQL and MariaDB; H2 has none, and its calls are never batched.
 */
public interface BatchLeaseSql {

    /**
     * The exclusive acquire of {@code rows} leases in one statement, by the rules of
     * {@link LeaseSql#acquireSql} for each row, in name order (the caller sorts them: two batches lock
     * rows in the same order). Returns a row for each grant only (PostgreSQL) or each row's final state
     * ({@link LeaseSql#acquireReturnsFinalRow}), with the name first, then as the acquire. Binds as
     * {@link #bindsArrays}.
     */
    String acquireAllSql(int rows);

    /**
     * The release of {@code rows} grants in one statement (each matched by name, owner and token,
     * live), locking the rows in name order; returns the name of each released row and whether a
     * waiter may be queued for it. Binds as {@link #bindsArrays}, on MariaDB after the names alone.
     *
     * @param relaxed PostgreSQL: commit without waiting for the WAL flush (ignored elsewhere)
     */
    String releaseAllSql(int rows, boolean relaxed);

    /**
     * How batch statements bind: three arrays (names, owners, then ttl micros or tokens) where true,
     * else the three values of each row in turn.
     */
    boolean bindsArrays();

    /**
     * Binds a batch's rows from parameter {@code first}, as {@link #bindsArrays} says: three arrays
     * (names, owners, numbers), or name, owner, number of each row in turn.
     */
    default void bindRows(
            Connection c, PreparedStatement ps, int first, List<String> names, List<String> owners, List<Long> numbers)
            throws SQLException {
        if (bindsArrays()) {
            ps.setArray(first, c.createArrayOf("varchar", names.toArray()));
            ps.setArray(first + 1, c.createArrayOf("varchar", owners.toArray()));
            ps.setArray(first + 2, c.createArrayOf("bigint", numbers.toArray()));
            return;
        }
        int i = first;
        for (int row = 0; row < names.size(); row++) {
            ps.setString(i++, names.get(row));
            ps.setString(i++, owners.get(row));
            ps.setLong(i++, numbers.get(row));
        }
    }
}
