package dev.holdfast.optimistic.offline;

import dev.holdfast.internal.Arguments;
import java.math.BigDecimal;
import java.util.Comparator;
import java.util.UUID;

/**
 * One row of a business transaction: the table's name and the row's key.
 *
 * @param table the table name, as configured in its {@code VersionedTable}
 * @param id    the key: {@link Long}, {@link String}, {@link UUID} or {@link BigDecimal}
 */
public record RowId(String table, Object id) implements Comparable<RowId> {

    // One global order for every commit, so that two commits lock shared rows in the same order.
    private static final Comparator<RowId> ORDER = Comparator.comparing(RowId::table)
            .thenComparing(r -> r.id.getClass().getName())
            .thenComparing(RowId::compareIds);

    public RowId {
        Arguments.notNull(table, "table");
        Arguments.notNull(id, "id");
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static int compareIds(RowId a, RowId b) {
        return ((Comparable) a.id).compareTo(b.id);
    }

    @Override
    public int compareTo(RowId other) {
        return ORDER.compare(this, other);
    }

    @Override
    public String toString() {
        return table + "(" + id + ")";
    }
}
