package dev.holdfast.lease;

import dev.holdfast.jdbc.SqlIdentifier;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A write to a protected resource row that the database itself refuses when a newer lease grant
 * has written the row since (Kleppmann's fencing): one statement,
 * <pre>{@code UPDATE <table> SET <v1> = ?, …, <fence> = ? WHERE <key> = ? AND (<fence> IS NULL OR <fence> <= ?)}</pre>
 * The resource row keeps, in {@code <fence>}, the highest token that wrote it. A holder may write
 * many times under one grant (equal token); a holder whose lease expired while it paused holds a
 * smaller token than whoever wrote since, and its write changes nothing.
 *
 * <pre>{@code
 * FencedUpdate fence = FencedUpdate.of("account", "id", "fence_token", "balance");
 * boolean written = fence.update(connection, lease.token(), accountId, newBalance);
 * }</pre>
 *
 * <p>Runs on the caller's connection, inside the caller's transaction if any. Identifiers are
 * validated ({@link SqlIdentifier}); values are bound, never concatenated. On MariaDB keep the
 * driver's default {@code useAffectedRows=false}: with it, rewriting identical values would report 0.
 */
public final class FencedUpdate {

    private final String sql;
    private final int values;

    private FencedUpdate(String sql, int values) {
        this.sql = sql;
        this.values = values;
    }

    /**
     * A fenced update of {@code valueColumns} in {@code table}, its statement built once. Each name is
     * a plain identifier as {@link SqlIdentifier} defines it; only {@code table} may be
     * schema-qualified.
     *
     * @param table        the resource table
     * @param keyColumn    its key column, unique: a write counts only if it changed exactly one row
     * @param fenceColumn  a nullable BIGINT column holding the highest token that wrote the row
     * @param valueColumns the columns the write sets, at least one, in the order of
     *                     {@link #update}'s values
     * @return the fenced update, thread-safe and reusable
     * @throws IllegalArgumentException if a name is not a plain identifier, or no value column is given
     */
    public static FencedUpdate of(String table, String keyColumn, String fenceColumn, String... valueColumns) {
        String t = SqlIdentifier.of(table).value();
        String key = SqlIdentifier.unqualified(keyColumn).value();
        String fence = SqlIdentifier.unqualified(fenceColumn).value();
        if (valueColumns == null || valueColumns.length == 0) {
            throw new IllegalArgumentException("A fenced update needs at least one value column");
        }
        List<String> columns = Arrays.stream(valueColumns)
                .map(c -> SqlIdentifier.unqualified(c).value())
                .toList();
        String set = columns.stream().map(c -> c + " = ?").collect(Collectors.joining(", "));
        return new FencedUpdate(
                "UPDATE " + t + " SET " + set + ", " + fence + " = ? WHERE " + key + " = ? AND (" + fence
                        + " IS NULL OR " + fence + " <= ?)",
                columns.size());
    }

    /**
     * {@return the statement, for review or for use inside a larger SQL unit} Its parameters are the
     * values, the token, the key, and the token again.
     */
    public String sql() {
        return sql;
    }

    /**
     * Writes {@code values} to the row {@code key} if {@code token} is not older than the row's fence.
     *
     * @param connection the caller's connection: the write joins its transaction, or commits alone in
     *                   auto-commit mode; it is neither committed nor closed here
     * @param token      the fencing token of the caller's grant ({@link Lease#token()})
     * @param key        the value of the key column of the row to write
     * @param values     the new values, one for each value column, in the order {@link #of} was given them
     * @return true if written; false if a newer grant has written the row (stale token) or there is no such row
     * @throws IllegalArgumentException if the number of values does not match the value columns
     * @throws SQLException             if the database refused the statement or the connection failed
     */
    public boolean update(Connection connection, long token, Object key, Object... values) throws SQLException {
        if (values == null || values.length != this.values) {
            throw new IllegalArgumentException(
                    "Expected " + this.values + " values, got " + (values == null ? 0 : values.length));
        }
        try (PreparedStatement ps = connection.prepareStatement(sql)) {
            int i = 1;
            for (Object v : values) {
                ps.setObject(i++, v);
            }
            ps.setLong(i++, token);
            ps.setObject(i++, key);
            ps.setLong(i, token);
            return ps.executeUpdate() == 1;
        }
    }
}
