package dev.holdfast.jdbc;

import java.util.List;

/**
 * The tables Holdfast keeps state in. Each has one DDL script per dialect, shipped in the jar at
 * {@code dev/holdfast/schema/<dialect>/<script>}, that creates the table with its indexes and its
 * satellite tables (for the leases {@code <name>_queue}, and on PostgreSQL {@code <name>_timelines}),
 * the table name written as the placeholder {@code ${<placeholder>}}. Every statement is
 * {@code CREATE … IF NOT EXISTS}, so running the scripts at every start is harmless. They are named
 * as Flyway versioned migrations ({@code V1_1__holdfast_locks.sql}, {@code V1_2__holdfast_leases.sql};
 * on H2 also {@link SchemaInstaller#CLOCK_SCRIPT}), so that Flyway can run a dialect's folder in a
 * history table of Holdfast's own; the Liquibase changelog {@code dev/holdfast/schema/holdfast-changelog.xml}
 * runs the same scripts. A later change to a table will come as a script of a later version.
 */
public enum HoldfastTable {

    /** The offline pessimistic locks of {@code dev.holdfast.pessimistic.offline}. */
    OFFLINE_LOCKS("holdfast_locks", "V1_1__holdfast_locks.sql"),

    /** The distributed leases of {@code dev.holdfast.lease}. */
    LEASES("holdfast_leases", "V1_2__holdfast_leases.sql");

    /** Longest table name the installer accepts: index names append up to 14 characters. */
    public static final int MAX_NAME_LENGTH = 48;

    private final String defaultName;
    private final List<String> scripts;

    HoldfastTable(String defaultName, String... scripts) {
        this.defaultName = defaultName;
        this.scripts = List.of(scripts);
    }

    /** {@return the table name used when none is configured, e.g. {@code holdfast_leases}} */
    public String defaultName() {
        return defaultName;
    }

    /**
     * {@return the file names of the table's scripts inside each dialect's folder, in the order they run}
     * The list is unmodifiable and holds one script in this version, which creates the table as it is;
     * a later change adds a script.
     */
    public List<String> scripts() {
        return scripts;
    }

    /**
     * {@return the Flyway placeholder the scripts use for the table name: {@code <defaultName>_table}, e.g.
     * {@code holdfast_leases_table}}
     */
    public String placeholder() {
        return defaultName + "_table";
    }
}
