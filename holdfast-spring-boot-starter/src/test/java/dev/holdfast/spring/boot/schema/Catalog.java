package dev.holdfast.spring.boot.schema;

import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the catalog of a {@link PrivateSchema} says of Holdfast's tables (every table whose name starts
 * with {@code holdfast_locks} or {@code holdfast_leases}), as sorted lines to compare: the JDBC
 * metadata of columns (position, type, size, precision, nullability, default, identity, generated),
 * indexes (columns, order, uniqueness) and primary keys, every row the database's
 * {@code information_schema} keeps of the table, its columns, indexes and constraints, and on
 * PostgreSQL the definitions of indexes and constraints, on MariaDB {@code SHOW CREATE TABLE}.
 * Statistics and times are left out; the schema's name reads {@code <schema>}, H2's generated
 * constraint and index names {@code CONSTRAINT_*} and {@code PRIMARY_KEY_*}, and PostgreSQL's names of
 * not-null checks {@code *_*_<column number>_not_null}.
 */
final class Catalog {

    private static final Set<String> VOLATILE = Set.of(
            "CARDINALITY",
            "LAST_MODIFICATION",
            "CREATE_TIME",
            "UPDATE_TIME",
            "CHECK_TIME",
            "TABLE_ROWS",
            "AVG_ROW_LENGTH",
            "DATA_LENGTH",
            "MAX_DATA_LENGTH",
            "INDEX_LENGTH",
            "DATA_FREE",
            "AUTO_INCREMENT",
            "PAGES",
            "CHECKSUM",
            "ROW_COUNT_ESTIMATE");
    private static final Pattern H2_GENERATED = Pattern.compile("\\b(CONSTRAINT|PRIMARY_KEY)_[0-9A-F]+\\b");
    /** PostgreSQL's names of not-null checks: the schema's and the table's object ids, then the column's number. */
    private static final Pattern PG_NOT_NULL = Pattern.compile("\\b\\d+_\\d+_(\\d+_not_null)\\b");

    private Catalog() {}

    /** {@code actual} describes the same tables as {@code expected}: the differing lines, if any, are reported. */
    static void assertSame(Map<String, List<String>> actual, Map<String, List<String>> expected) {
        expected.forEach((table, lines) ->
                assertThat(actual.getOrDefault(table, List.of())).as(table).containsExactlyElementsOf(lines));
        assertThat(actual.keySet()).isEqualTo(expected.keySet());
    }

    /** Each Holdfast table of the schema (by its stored name, lower case) with the lines that describe it. */
    static Map<String, List<String>> of(PrivateSchema schema) throws SQLException {
        Map<String, List<String>> tables = new TreeMap<>();
        try (Connection c = schema.dataSource().getConnection()) {
            for (String table : holdfastTables(c, schema)) {
                List<String> lines = new ArrayList<>();
                jdbcMetadata(c, schema, table, lines);
                switch (schema.kind()) {
                    case H2 -> h2(c, schema, table, lines);
                    case POSTGRESQL -> postgresql(c, schema, table, lines);
                    case MARIADB -> mariadb(c, schema, table, lines);
                }
                tables.put(
                        table.toLowerCase(Locale.ROOT), lines.stream().sorted().toList());
            }
        }
        return tables;
    }

    private static List<String> holdfastTables(Connection c, PrivateSchema schema) throws SQLException {
        List<String> found = new ArrayList<>();
        try (ResultSet rs =
                c.getMetaData().getTables(catalog(schema), schemaPattern(schema), "%", new String[] {"TABLE"})) {
            while (rs.next()) {
                String name = rs.getString("TABLE_NAME");
                String lower = name.toLowerCase(Locale.ROOT);
                if (lower.startsWith("holdfast_locks") || lower.startsWith("holdfast_leases")) {
                    found.add(name);
                }
            }
        }
        return found;
    }

    private static void jdbcMetadata(Connection c, PrivateSchema schema, String table, List<String> lines)
            throws SQLException {
        DatabaseMetaData meta = c.getMetaData();
        try (ResultSet rs = meta.getColumns(catalog(schema), schemaPattern(schema), table, "%")) {
            lines.addAll(rows(
                    "jdbc column",
                    rs,
                    schema,
                    "ORDINAL_POSITION",
                    "COLUMN_NAME",
                    "TYPE_NAME",
                    "COLUMN_SIZE",
                    "DECIMAL_DIGITS",
                    "NULLABLE",
                    "COLUMN_DEF",
                    "IS_AUTOINCREMENT",
                    "IS_GENERATEDCOLUMN"));
        }
        try (ResultSet rs = meta.getIndexInfo(catalog(schema), schemaPattern(schema), table, false, false)) {
            lines.addAll(rows(
                    "jdbc index",
                    rs,
                    schema,
                    "INDEX_NAME",
                    "NON_UNIQUE",
                    "TYPE",
                    "ORDINAL_POSITION",
                    "COLUMN_NAME",
                    "ASC_OR_DESC",
                    "FILTER_CONDITION"));
        }
        try (ResultSet rs = meta.getPrimaryKeys(catalog(schema), schemaPattern(schema), table)) {
            lines.addAll(rows("jdbc primary key", rs, schema, "PK_NAME", "KEY_SEQ", "COLUMN_NAME"));
        }
    }

    private static void h2(Connection c, PrivateSchema schema, String table, List<String> lines) throws SQLException {
        String where = " WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?";
        for (String view : List.of(
                "TABLES",
                "COLUMNS",
                "INDEXES",
                "INDEX_COLUMNS",
                "TABLE_CONSTRAINTS",
                "KEY_COLUMN_USAGE",
                "CHECK_CONSTRAINTS")) {
            String sql = view.equals("CHECK_CONSTRAINTS")
                    ? "SELECT k.* FROM INFORMATION_SCHEMA.CHECK_CONSTRAINTS k JOIN INFORMATION_SCHEMA.TABLE_CONSTRAINTS t"
                            + " ON t.CONSTRAINT_SCHEMA = k.CONSTRAINT_SCHEMA AND t.CONSTRAINT_NAME = k.CONSTRAINT_NAME"
                            + " WHERE t.TABLE_SCHEMA = ? AND t.TABLE_NAME = ?"
                    : "SELECT * FROM INFORMATION_SCHEMA." + view + where;
            lines.addAll(query(c, "h2 " + view, sql, schema, schema.name(), table));
        }
    }

    private static void postgresql(Connection c, PrivateSchema schema, String table, List<String> lines)
            throws SQLException {
        String where = " WHERE table_schema = ? AND table_name = ?";
        for (String view : List.of("tables", "columns", "table_constraints", "key_column_usage")) {
            lines.addAll(query(
                    c, "pg " + view, "SELECT * FROM information_schema." + view + where, schema, schema.name(), table));
        }
        lines.addAll(query(
                c,
                "pg index",
                "SELECT indexname, indexdef FROM pg_indexes" + " WHERE schemaname = ? AND tablename = ?",
                schema,
                schema.name(),
                table));
        lines.addAll(query(
                c,
                "pg constraint",
                "SELECT c.conname, c.contype, c.condeferrable, c.condeferred,"
                        + " pg_get_constraintdef(c.oid) AS definition FROM pg_constraint c"
                        + " JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace"
                        + " WHERE n.nspname = ? AND t.relname = ?",
                schema,
                schema.name(),
                table));
        lines.addAll(query(
                c,
                "pg class",
                "SELECT t.relkind, t.relpersistence, t.reloptions, t.relhasindex,"
                        + " t.relnatts, a.amname FROM pg_class t JOIN pg_namespace n ON n.oid = t.relnamespace"
                        + " LEFT JOIN pg_am a ON a.oid = t.relam WHERE n.nspname = ? AND t.relname = ?",
                schema,
                schema.name(),
                table));
    }

    private static void mariadb(Connection c, PrivateSchema schema, String table, List<String> lines)
            throws SQLException {
        String where = " WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?";
        for (String view : List.of("TABLES", "COLUMNS", "STATISTICS", "TABLE_CONSTRAINTS", "KEY_COLUMN_USAGE")) {
            lines.addAll(query(
                    c,
                    "mariadb " + view,
                    "SELECT * FROM information_schema." + view + where,
                    schema,
                    schema.name(),
                    table));
        }
        // The whole definition: engine, charset and collation of the table and of each column, generated columns.
        lines.addAll(query(c, "mariadb show create table", "SHOW CREATE TABLE `" + table + "`", schema));
    }

    private static List<String> query(
            Connection c, String section, String sql, PrivateSchema schema, Object... parameters) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                ps.setObject(i + 1, parameters[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                ResultSetMetaData meta = rs.getMetaData();
                List<String> columns = new ArrayList<>();
                for (int i = 1; i <= meta.getColumnCount(); i++) {
                    columns.add(meta.getColumnLabel(i));
                }
                return rows(section, rs, schema, columns.toArray(String[]::new));
            }
        }
    }

    private static List<String> rows(String section, ResultSet rs, PrivateSchema schema, String... columns)
            throws SQLException {
        List<String> rows = new ArrayList<>();
        while (rs.next()) {
            StringBuilder row = new StringBuilder(section).append(':');
            for (String column : columns) {
                if (!VOLATILE.contains(column.toUpperCase(Locale.ROOT))) {
                    row.append(' ')
                            .append(column.toLowerCase(Locale.ROOT))
                            .append('=')
                            .append(normalise(rs.getString(column), schema));
                }
            }
            rows.add(row.toString());
        }
        return rows;
    }

    private static String normalise(String value, PrivateSchema schema) {
        if (value == null) {
            return "null";
        }
        String named = Pattern.compile(Pattern.quote(schema.name()), Pattern.CASE_INSENSITIVE)
                .matcher(value)
                .replaceAll("<schema>");
        return switch (schema.kind()) {
            case H2 -> H2_GENERATED.matcher(named).replaceAll("$1_*");
            case POSTGRESQL -> PG_NOT_NULL.matcher(named).replaceAll("*_*_$1");
            case MARIADB -> named;
        };
    }

    private static String catalog(PrivateSchema schema) {
        return schema.kind() == TestDatabase.Kind.MARIADB ? schema.name() : null;
    }

    private static String schemaPattern(PrivateSchema schema) {
        return schema.kind() == TestDatabase.Kind.MARIADB ? null : schema.name();
    }
}
