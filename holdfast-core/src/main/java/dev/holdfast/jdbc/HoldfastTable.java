package dev.holdfast.jdbc;

/**
 * The tables Holdfast keeps state in. Each has a DDL script per dialect, shipped in the jar at
 * {@code dev/holdfast/schema/<dialect>/<script>}, named so that Flyway can run it as a versioned
 * migration: point Flyway at {@code classpath:dev/holdfast/schema/<dialect>} and give it the
 * placeholder {@code ${<placeholder>}} with the table name.
 */
public enum HoldfastTable {

    /** The offline pessimistic locks of {@code dev.holdfast.pessimistic.offline}. */
    OFFLINE_LOCKS("holdfast_locks", "V1_1__holdfast_locks.sql"),

    /** The distributed leases of {@code dev.holdfast.lease}. */
    LEASES("holdfast_leases", "V1_2__holdfast_leases.sql");

    /** Longest table name the installer accepts: index names append up to 14 characters. */
    public static final int MAX_NAME_LENGTH = 48;

    private final String defaultName;
    private final String script;

    HoldfastTable(String defaultName, String script) {
        this.defaultName = defaultName;
        this.script = script;
    }

    /** The table name used when none is configured. */
    public String defaultName() {
        return defaultName;
    }

    /** The script's file name inside each dialect's folder. */
    public String script() {
        return script;
    }

    /** The Flyway placeholder the script uses for the table name: {@code <defaultName>_table}. */
    public String placeholder() {
        return defaultName + "_table";
    }
}
