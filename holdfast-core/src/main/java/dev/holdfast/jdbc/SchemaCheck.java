package dev.holdfast.jdbc;

import dev.holdfast.internal.Arguments;
import dev.holdfast.internal.Failures;
import dev.holdfast.jdbc.dialect.Dialect;
import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;

/**
 * Tells whether Holdfast's tables are there and current, before the first lock or lease finds out:
 * every table the scripts of {@link SchemaInstaller} create (the satellites too) must be readable
 * under its configured name with every column the scripts give it, and on H2 the clock function must
 * exist. Each table costs one statement that reads no row ({@code SELECT <columns> FROM <table>
 * WHERE 1=0}), resolved as Holdfast's own statements resolve names (search path, default schema);
 * only a table that fails is looked at further, to name what is missing. Runs on its own connection,
 * in autocommit mode; creates and changes nothing.
 *
 * <pre>{@code
 * List<SchemaCheck.Problem> problems = new SchemaCheck(dataSource, Dialect.POSTGRESQL)
 *         .check(Map.of(HoldfastTable.LEASES, "holdfast_leases"));
 * }</pre>
 */
public final class SchemaCheck {

    private static final Set<String> NOT_COLUMNS =
            Set.of("primary", "constraint", "key", "unique", "index", "foreign", "check");

    private final DataSource dataSource;
    private final Dialect dialect;

    /**
     * @param dataSource the database to look at (a connection of its own, autocommit)
     * @param dialect    the database's dialect: whose scripts say what should be there
     */
    public SchemaCheck(DataSource dataSource, Dialect dialect) {
        this.dataSource = Arguments.notNull(dataSource, "dataSource");
        this.dialect = Arguments.notNull(dialect, "dialect");
    }

    /**
     * Something missing from the schema.
     *
     * @param table          the Holdfast table whose scripts create what is missing
     * @param relation       the missing or outdated table as named in the database (a satellite such as
     *                       {@code holdfast_leases_queue} included), or the clock function's name
     * @param missingColumns the columns the table lacks (an older schema); empty when the whole table
     *                       or function is missing
     * @param script         the script that creates it, a class path resource in {@code holdfast-core}
     *                       ({@code dev/holdfast/schema/<dialect>/<file>})
     * @param detail         what the database said, or null if the columns were named
     */
    public record Problem(
            HoldfastTable table,
            String relation,
            List<String> missingColumns,
            String script,
            @Nullable String detail) {

        /**
         * Creates a problem; copies the column list.
         *
         * @param table          the Holdfast table whose scripts create what is missing
         * @param relation       the missing or outdated table as named in the database, or the clock function's name
         * @param missingColumns the columns the table lacks; empty when the whole table or function is missing;
         *                       not null and without null elements
         * @param script         the class path resource of the script that creates it
         * @param detail         what the database said, or null
         */
        public Problem {
            missingColumns = List.copyOf(missingColumns);
        }

        /**
         * {@return one line for people: what is missing, the script that creates it and the database's detail
         * if any}
         */
        public String describe() {
            String what = missingColumns.isEmpty()
                    ? (relation.endsWith("()") ? "function " : "table ") + relation + " is missing"
                    : "table " + relation + " lacks column" + (missingColumns.size() == 1 ? " " : "s ")
                            + String.join(", ", missingColumns) + " (an older Holdfast schema)";
            return what + " (created by " + script + ")" + (detail == null ? "" : ": " + detail);
        }
    }

    /**
     * Looks at every table of {@code tables}, each under its configured name.
     *
     * @param tables the tables to look at, each with its configured table name (unqualified); not null
     * @return what is missing, in table order; empty when everything is there
     * @throws IllegalArgumentException if {@code tables} is null, or a name is not a plain identifier
     *                                  {@link SchemaInstaller} accepts
     * @throws dev.holdfast.DatabaseException if no connection could be had (nothing could be told)
     */
    public List<Problem> check(Map<HoldfastTable, String> tables) {
        Arguments.notNull(tables, "tables");
        Map<HoldfastTable, String> ordered = new EnumMap<>(HoldfastTable.class);
        ordered.putAll(tables);
        List<Problem> problems = new ArrayList<>();
        Connection connection;
        try {
            connection = dataSource.getConnection();
        } catch (SQLException e) {
            throw Failures.database("checking Holdfast's schema", e);
        }
        try (Connection c = connection) {
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true); // a failed probe must not abort a transaction (PostgreSQL)
            }
            if (dialect == Dialect.H2 && !readable(c, "SELECT " + dialect.clock())) {
                problems.add(new Problem(
                        ordered.keySet().stream().findFirst().orElse(HoldfastTable.LEASES),
                        dialect.clock(),
                        List.of(),
                        path(SchemaInstaller.CLOCK_SCRIPT),
                        null));
            }
            for (Map.Entry<HoldfastTable, String> entry : ordered.entrySet()) {
                HoldfastTable table = entry.getKey();
                String ddl = SchemaInstaller.script(dialect, table, entry.getValue());
                String script = path(table.scripts().get(table.scripts().size() - 1));
                for (Map.Entry<String, List<String>> relation : columns(ddl).entrySet()) {
                    Problem problem = check(c, table, relation.getKey(), relation.getValue(), script);
                    if (problem != null) {
                        problems.add(problem);
                    }
                }
            }
        } catch (SQLException e) {
            throw Failures.database("checking Holdfast's schema", e);
        }
        return List.copyOf(problems);
    }

    private static @Nullable Problem check(
            Connection c, HoldfastTable table, String relation, List<String> expected, String script)
            throws SQLException {
        if (readable(c, "SELECT " + String.join(", ", expected) + " FROM " + relation + " WHERE 1=0")) {
            return null;
        }
        Set<String> present = new LinkedHashSet<>();
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT * FROM " + relation + " WHERE 1=0")) {
            ResultSetMetaData meta = rs.getMetaData();
            for (int i = 1; i <= meta.getColumnCount(); i++) {
                present.add(meta.getColumnName(i).toLowerCase(Locale.ROOT));
            }
        } catch (SQLException missingTable) {
            return new Problem(table, relation, List.of(), script, null);
        }
        List<String> missing =
                expected.stream().filter(column -> !present.contains(column)).toList();
        // every column there, yet the first statement failed: not a missing column, say what the database said
        return new Problem(table, relation, missing, script, missing.isEmpty() ? "not readable" : null);
    }

    private static boolean readable(Connection c, String sql) {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            return true;
        } catch (SQLException e) {
            return false;
        }
    }

    private String path(String file) {
        return "dev/holdfast/schema/" + dialect.id() + "/" + file;
    }

    /** The tables a script creates, each with its columns in order (lower case), from its CREATE TABLE statements. */
    static Map<String, List<String>> columns(String ddl) {
        Map<String, List<String>> tables = new LinkedHashMap<>();
        for (String statement : SchemaInstaller.split(ddl)) {
            String head = "CREATE TABLE IF NOT EXISTS ";
            if (!statement.regionMatches(true, 0, head, 0, head.length())) {
                continue;
            }
            int open = statement.indexOf('(');
            String name = statement.substring(head.length(), open).strip();
            List<String> columns = new ArrayList<>();
            int depth = 0;
            StringBuilder element = new StringBuilder();
            for (int i = open + 1; i < statement.length() && depth >= 0; i++) {
                char ch = statement.charAt(i);
                if (ch == '(') {
                    depth++;
                } else if (ch == ')') {
                    depth--;
                }
                if ((ch == ',' && depth == 0) || depth < 0) {
                    column(element.toString(), columns);
                    element.setLength(0);
                } else {
                    element.append(ch);
                }
            }
            tables.put(name, List.copyOf(columns));
        }
        return tables;
    }

    private static void column(String element, List<String> columns) {
        String[] words = element.strip().split("\\s+", 2);
        String first = words[0].toLowerCase(Locale.ROOT);
        if (!first.isEmpty() && !NOT_COLUMNS.contains(first)) {
            columns.add(first);
        }
    }
}
