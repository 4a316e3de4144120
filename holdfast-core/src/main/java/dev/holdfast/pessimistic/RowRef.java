package dev.holdfast.pessimistic;

import dev.holdfast.jdbc.SqlIdentifier;
import dev.holdfast.jdbc.internal.Keys;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Comparator;
import java.util.UUID;

/**
 * One row of one table, named by its key: what a pessimistic lock is taken on.
 *
 * <p>Rows are ordered by table name, key column, key and schema, each first without regard to
 * case, then by exact spelling. {@link PessimisticLocks#forUpdateAll} locks in this order, after
 * resolving an unqualified table name to its schema where that matters, so that any two sets of
 * rows are locked in one global order however their names are spelled, which is what makes it
 * deadlock-free.
 *
 * @param table     the table, a plain identifier, optionally schema-qualified
 * @param keyColumn the unique key column, a plain identifier
 * @param key       the key value: a {@link String} (1 to {@value #MAX_STRING_KEY} characters, not
 *                  blank), an integral number (stored as {@link Long}), a {@link BigDecimal}
 *                  or a {@link UUID}
 */
public record RowRef(SqlIdentifier table, SqlIdentifier keyColumn, Object key) implements Comparable<RowRef> {

    /** Longest string key accepted. */
    public static final int MAX_STRING_KEY = Keys.MAX_STRING_KEY;

    private static final Comparator<RowRef> ORDER = Comparator.comparing((RowRef r) -> fold(tableName(r)))
            .thenComparing(r -> fold(r.keyColumn.value()))
            .thenComparing(r -> r.key.getClass().getName())
            .thenComparing(RowRef::compareKeys)
            .thenComparing(r -> fold(schemaName(r)))
            .thenComparing(RowRef::tableName)
            .thenComparing(RowRef::schemaName)
            .thenComparing(r -> r.keyColumn.value());

    /**
     * Checks the parts and puts the key in its normal form (an {@link Integer}, {@link Short},
     * {@link Byte} or {@link BigInteger} becomes a {@link Long}).
     *
     * @param table     the table, a plain identifier, optionally schema-qualified; not null
     * @param keyColumn the unique key column, a plain identifier; not null
     * @param key       the key value: a {@link String} (1 to {@value #MAX_STRING_KEY} characters, not
     *                  blank), a {@link Long}, {@link Integer}, {@link Short} or {@link Byte}, a
     *                  {@link BigInteger} that fits a {@code long}, a {@link BigDecimal} or a
     *                  {@link UUID}
     * @throws IllegalArgumentException if any part is null or invalid
     */
    public RowRef {
        if (table == null || keyColumn == null) {
            throw new IllegalArgumentException("table and key column must not be null");
        }
        key = Keys.normalize("key", key);
    }

    /**
     * {@return the row of {@code table} whose {@code keyColumn} equals {@code key}}
     *
     * @param table     the table, a plain identifier ({@link SqlIdentifier}), optionally
     *                  schema-qualified ({@code sales.purchase_order})
     * @param keyColumn the unique key column, a plain identifier without a schema or table part
     * @param key       the key value: a {@link String} (1 to {@value #MAX_STRING_KEY} characters, not
     *                  blank), a {@link Long}, {@link Integer}, {@link Short} or {@link Byte}, a
     *                  {@link BigInteger} that fits a {@code long}, a {@link BigDecimal} or a
     *                  {@link UUID}
     * @throws IllegalArgumentException if a name is null or not a plain identifier, or the key is null
     *                                  or not of an accepted type and size
     */
    public static RowRef of(String table, String keyColumn, Object key) {
        return new RowRef(SqlIdentifier.of(table), SqlIdentifier.unqualified(keyColumn), key);
    }

    /**
     * {@return the row of {@code table} whose column {@code id} equals {@code key}}
     *
     * @param table the table, a plain identifier ({@link SqlIdentifier}), optionally schema-qualified
     * @param key   the value of the {@code id} column, of a type {@link #of(String, String, Object)} accepts
     * @throws IllegalArgumentException if {@code table} is null or not a plain identifier, or the key
     *                                  is null or not of an accepted type and size
     */
    public static RowRef of(String table, Object key) {
        return of(table, "id", key);
    }

    private static String tableName(RowRef r) {
        String value = r.table.value();
        return value.substring(value.indexOf('.') + 1);
    }

    private static String schemaName(RowRef r) {
        String value = r.table.value();
        int dot = value.indexOf('.');
        return dot < 0 ? "" : value.substring(0, dot);
    }

    private static String fold(String name) {
        return name.toLowerCase(java.util.Locale.ROOT);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static int compareKeys(RowRef a, RowRef b) {
        return ((Comparable) a.key).compareTo(b.key);
    }

    @Override
    public int compareTo(RowRef other) {
        return ORDER.compare(this, other);
    }

    @Override
    public String toString() {
        return table + "(" + keyColumn + "=" + key + ")";
    }
}
