package dev.holdfast.jdbc;

import dev.holdfast.DatabaseException;
import dev.holdfast.internal.Arguments;
import dev.holdfast.internal.Failures;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.jdbc.dialect.SqlErrorKind;
import dev.holdfast.jdbc.internal.Jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * Creates Holdfast's tables from the DDL scripts shipped in the jar ({@link HoldfastTable#scripts()}).
 * Idempotent: every statement is {@code CREATE … IF NOT EXISTS}, so it can run at every start of every
 * server. Runs on its own connection in autocommit mode.
 *
 * <pre>{@code
 * new SchemaInstaller(dataSource).install(HoldfastTable.LEASES, "holdfast_leases");
 * }</pre>
 */
public final class SchemaInstaller {

    /**
     * The file name of the script, in the {@code h2} folder only, that creates the clock function
     * {@link Dialect#clock()} calls on H2 ({@link #installClock()}).
     */
    public static final String CLOCK_SCRIPT = "V1_0__holdfast_clock.sql";

    private final DataSource dataSource;
    private final Dialect dialect;

    /**
     * Creates an installer for the database behind {@code dataSource}, whose dialect it detects at once
     * (borrowing one connection).
     *
     * @param dataSource the database to install into; not null
     * @throws IllegalArgumentException if {@code dataSource} is null, or its database is not one Holdfast supports
     * @throws DatabaseException        if no connection could be had or its metadata could not be read
     */
    public SchemaInstaller(DataSource dataSource) {
        this(dataSource, Dialect.detect(dataSource));
    }

    /**
     * Creates an installer that installs the scripts of {@code dialect}, without asking the database which
     * it is. Connects to nothing until it installs.
     *
     * @param dataSource the database to install into; not null
     * @param dialect    whose scripts to run; not null
     * @throws IllegalArgumentException if {@code dataSource} or {@code dialect} is null
     */
    public SchemaInstaller(DataSource dataSource, Dialect dialect) {
        this.dataSource = Arguments.notNull(dataSource, "dataSource");
        this.dialect = Arguments.notNull(dialect, "dialect");
    }

    /**
     * Installs {@code table} under its {@linkplain HoldfastTable#defaultName() default name}, as
     * {@link #install(HoldfastTable, String)} does.
     *
     * @param table the table to create; not null
     * @throws DatabaseException if no connection could be had or a statement failed
     */
    public void install(HoldfastTable table) {
        install(table, table.defaultName());
    }

    /**
     * Creates {@code table} named {@code name} with its indexes if it does not exist yet, and on H2
     * the clock function of {@link Dialect#clock()}.
     *
     * @param table the table to create; not null
     * @param name  the table's name in the database: a plain unqualified identifier (see {@link SqlIdentifier})
     *              of at most {@value HoldfastTable#MAX_NAME_LENGTH} characters; its satellite tables and indexes
     *              are named after it
     * @throws IllegalArgumentException if {@code table} is null, or {@code name} is null or not a plain unqualified
     *                                  identifier of at most {@value HoldfastTable#MAX_NAME_LENGTH} characters
     * @throws DatabaseException        if no connection could be had or a statement failed (a clash with
     *                                  another server creating the same tables at once is retried once)
     */
    public void install(HoldfastTable table, String name) {
        Arguments.notNull(table, "table");
        install(Map.of(table, name));
    }

    /**
     * {@link #install(HoldfastTable, String)} for several tables at once, each under its name, on one
     * connection (on H2 the clock function once, first). The tables are created in the order of
     * {@link HoldfastTable}'s constants, whatever the map's order.
     *
     * @param tables each table to create with its name, as {@link #install(HoldfastTable, String)} takes them;
     *               not null; an empty map creates only H2's clock function
     * @throws IllegalArgumentException if {@code tables} is null, or for a bad name; then nothing is created
     * @throws DatabaseException        if no connection could be had or a statement failed (a clash with
     *                                  another server creating the same tables at once is retried once)
     */
    public void install(Map<HoldfastTable, String> tables) {
        Arguments.notNull(tables, "tables");
        List<String> statements = new ArrayList<>();
        if (dialect == Dialect.H2) {
            statements.addAll(split(read(dialect, CLOCK_SCRIPT)));
        }
        Map<HoldfastTable, String> ordered = new EnumMap<>(HoldfastTable.class);
        ordered.putAll(tables);
        ordered.forEach((table, name) -> statements.addAll(split(script(dialect, table, name))));
        run(statements, ordered.toString());
    }

    /**
     * Creates the clock function that {@link Dialect#clock()} needs on H2; nothing elsewhere.
     *
     * @throws DatabaseException if no connection could be had or a statement failed
     */
    public void installClock() {
        if (dialect == Dialect.H2) {
            run(split(read(dialect, CLOCK_SCRIPT)), "the H2 clock function");
        }
    }

    /**
     * The DDL that {@link #install(HoldfastTable, String)} runs for {@code table} (its
     * {@linkplain HoldfastTable#scripts() scripts}, without H2's clock function), with the table name
     * filled in, for review or for a migration tool. Connects to no database.
     *
     * @param dialect whose scripts to read; not null
     * @param table   the table whose scripts to read; not null
     * @param name    the table's name, as {@link #install(HoldfastTable, String)} takes it
     * @return the text of the table's scripts, comments included, one after the other in the order they run
     * @throws IllegalArgumentException if {@code name} is null or not a plain unqualified identifier of at
     *                                  most {@value HoldfastTable#MAX_NAME_LENGTH} characters
     */
    public static String script(Dialect dialect, HoldfastTable table, String name) {
        SqlIdentifier id = SqlIdentifier.unqualified(name);
        if (id.value().length() > HoldfastTable.MAX_NAME_LENGTH) {
            throw new IllegalArgumentException("Table name '" + name + "' is longer than "
                    + HoldfastTable.MAX_NAME_LENGTH + " characters (index names are derived from it)");
        }
        StringBuilder ddl = new StringBuilder();
        for (String script : table.scripts()) {
            ddl.append(read(dialect, script).replace("${" + table.placeholder() + "}", id.value()))
                    .append('\n');
        }
        return ddl.toString();
    }

    private void run(List<String> statements, String what) {
        try {
            runOnce(statements);
        } catch (SQLException first) {
            // Two servers creating the same table at once: PostgreSQL can report a duplicate key
            // in its catalog even with IF NOT EXISTS. The second attempt finds everything there.
            SqlErrorKind kind = dialect.classify(first);
            if (kind != SqlErrorKind.UNIQUE_VIOLATION && !"42P07".equals(first.getSQLState())) {
                throw Failures.database("installing " + what, first);
            }
            try {
                runOnce(statements);
            } catch (SQLException second) {
                second.addSuppressed(first);
                throw Failures.database("installing " + what, second);
            }
        }
    }

    // False positive: the work returns null as its Void result; NullAway sees type arguments' nullness
    // only in JSpecify mode, which needs a newer javac than Java 17's.
    @SuppressWarnings("NullAway")
    private void runOnce(List<String> statements) throws SQLException {
        try (Connection connection = dataSource.getConnection()) {
            Jdbc.autocommit(connection, c -> {
                try (Statement statement = c.createStatement()) {
                    for (String sql : statements) {
                        statement.execute(sql);
                    }
                }
                return null;
            });
        }
    }

    private static String read(Dialect dialect, String file) {
        String path = "/dev/holdfast/schema/" + dialect.id() + "/" + file;
        try (InputStream in = SchemaInstaller.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("Missing schema script " + path);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + path, e);
        }
    }

    /** Splits a script on semicolons that end a line; lines starting with {@code --} are comments. */
    static List<String> split(String script) {
        List<String> statements = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : script.split("\n")) {
            String trimmed = line.strip();
            if (trimmed.isEmpty() || trimmed.startsWith("--")) {
                continue;
            }
            if (trimmed.endsWith(";")) {
                current.append(trimmed, 0, trimmed.length() - 1);
                statements.add(current.toString().strip());
                current.setLength(0);
            } else {
                current.append(trimmed).append('\n');
            }
        }
        if (!current.toString().isBlank()) {
            statements.add(current.toString().strip());
        }
        return statements;
    }
}
