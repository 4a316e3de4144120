package dev.holdfast.pessimistic;

import dev.holdfast.internal.Invariants;
import dev.holdfast.jdbc.dialect.Dialect;
import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The one global order in which {@link PessimisticLocks#forUpdateAll} locks rows, computed on
 * what the database resolves a name to, not on how a caller spelled it: {@code Orders},
 * {@code ORDERS}, {@code orders} and {@code public.orders} must take their place in the same order
 * or two callers can deadlock.
 *
 * <p>The order is: table name, key column, key, schema, each compared without case first (every
 * supported database folds unquoted names, PostgreSQL to lower and H2 to upper case, and MariaDB
 * column names never depend on case), then the exact spellings, for MariaDB, where table and
 * database names are case-sensitive when {@code lower_case_table_names} is 0. That is a total
 * order on the real rows whether names are case-sensitive or not, so it needs no query of the
 * server's settings.
 *
 * <p>An unqualified name means the table the database resolves it to (the current schema or
 * database). That is only read from the database when it can change the order: when one call
 * holds two refs to the same table name, column and key, one qualified and one not. Otherwise the
 * schema is only a tie-break among rows that differ in table, column or key already.
 */
final class LockOrder {

    /** Resolves an unqualified table name to the schema (or MariaDB database) it means. */
    @FunctionalInterface
    interface SchemaResolver {
        String schemaOf(String unqualifiedTable) throws SQLException;
    }

    /** A row with the parts of its name as the order compares them. */
    private record Entry(
            RowRef row, String table, String column, String schema, String exactTable, String exactSchema) {
        static Entry of(RowRef row, @Nullable String resolvedSchema) {
            String value = row.table().value();
            int dot = value.indexOf('.');
            String table = dot < 0 ? value : value.substring(dot + 1);
            // resolvedSchema is null only for a qualified name, which carries its schema.
            String schema = dot < 0
                    ? Invariants.nonNull(resolvedSchema, "an unqualified name has a resolved schema")
                    : value.substring(0, dot);
            return new Entry(row, fold(table), fold(row.keyColumn().value()), fold(schema), table, schema);
        }

        boolean qualified() {
            return row.table().isQualified();
        }

        /** Same table name, column and key, compared as the database does, schema aside. */
        List<Object> nameColumnKey() {
            return List.of(table, column, row.key());
        }
    }

    private static final Comparator<Entry> ORDER = Comparator.comparing(Entry::table)
            .thenComparing(Entry::column)
            .thenComparing(e -> e.row().key().getClass().getName())
            .thenComparing(LockOrder::compareKeys)
            .thenComparing(Entry::schema)
            .thenComparing(Entry::exactTable)
            .thenComparing(Entry::exactSchema)
            .thenComparing(e -> e.row().keyColumn().value());

    private LockOrder() {}

    /**
     * {@code rows} in locking order, each real row once: the first spelling of a row in this order
     * stands for it. On MariaDB two spellings that differ only in case stay apart (they may be two
     * tables); locking one row twice in a transaction is harmless.
     */
    static List<RowRef> sort(Dialect dialect, Collection<RowRef> rows, SchemaResolver resolver) throws SQLException {
        Map<String, String> resolved = resolveWhereItMatters(rows, resolver);
        List<Entry> entries = new ArrayList<>(rows.size());
        for (RowRef row : rows) {
            String schema = row.table().isQualified()
                    ? null
                    : resolved.getOrDefault(row.table().value(), "");
            entries.add(Entry.of(row, schema));
        }
        entries.sort(ORDER);
        List<RowRef> ordered = new ArrayList<>(entries.size());
        Set<List<Object>> seen = new HashSet<>();
        for (Entry e : entries) {
            List<Object> identity = dialect == Dialect.MARIADB
                    ? List.of(e.exactTable(), e.column(), e.row().key(), e.exactSchema())
                    : List.of(e.table(), e.column(), e.row().key(), e.schema());
            if (seen.add(identity)) {
                ordered.add(e.row());
            }
        }
        return ordered;
    }

    /** The schema of each unqualified table name that shares name, column and key with a qualified ref. */
    private static Map<String, String> resolveWhereItMatters(Collection<RowRef> rows, SchemaResolver resolver)
            throws SQLException {
        Map<List<Object>, List<Entry>> groups = new HashMap<>();
        for (RowRef row : rows) {
            Entry e = Entry.of(row, "");
            groups.computeIfAbsent(e.nameColumnKey(), k -> new ArrayList<>()).add(e);
        }
        Map<String, String> resolved = new HashMap<>();
        for (List<Entry> group : groups.values()) {
            boolean mixed =
                    group.stream().anyMatch(Entry::qualified) && group.stream().anyMatch(e -> !e.qualified());
            if (mixed) {
                for (Entry e : group) {
                    String table = e.row().table().value();
                    if (!e.qualified() && !resolved.containsKey(table)) {
                        resolved.put(table, resolver.schemaOf(table));
                    }
                }
            }
        }
        return resolved;
    }

    /** Reads on {@code connection} what schema an unqualified name means, per dialect. */
    static SchemaResolver resolver(Dialect dialect, Connection connection) {
        String sql = switch (dialect) {
            // The search path decides; a table that does not exist (the lock will fail) gets the current schema.
            case POSTGRESQL ->
                "SELECT coalesce((SELECT n.nspname FROM pg_catalog.pg_class c"
                        + " JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass(?)),"
                        + " current_schema())";
            case H2 -> "SELECT CURRENT_SCHEMA";
            case MARIADB -> "SELECT DATABASE()";
        };
        return table -> {
            try (PreparedStatement ps = connection.prepareStatement(sql)) {
                if (dialect == Dialect.POSTGRESQL) {
                    ps.setString(1, table);
                }
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    String schema = rs.getString(1);
                    return schema == null ? "" : schema;
                }
            }
        };
    }

    private static String fold(String name) {
        return name == null ? "" : name.toLowerCase(Locale.ROOT);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static int compareKeys(Entry a, Entry b) {
        return ((Comparable) a.row().key()).compareTo(b.row().key());
    }
}
