package dev.holdfast.jdbc;

import java.util.List;

/**
 * The tables Holdfast keeps state in. Each has DDL scripts per dialect, shipped in the jar at
 * {@code dev/holdfast/schema/<dialect>/<script>}, named so that Flyway can run them as versioned
 * migrations: point Flyway at {@code classpath:dev/holdfast/schema/<dialect>} and give it the
 * placeholder {@code ${<placeholder>}} with the table name. A later script changes a table that an
 * earlier one created, idempotently, so running every script at every start is also correct.
 */
public enum HoldfastTable {

    /** The offline pessimistic locks of {@code dev.holdfast.pessimistic.offline}. */
    OFFLINE_LOCKS("holdfast_locks", "V1_1__holdfast_locks.sql", "V1_3__holdfast_locks_ended.sql"),

    /** The distributed leases of {@code dev.holdfast.lease}. */
    LEASES("holdfast_leases", "V1_2__holdfast_leases.sql", "V1_4__holdfast_leases_broken.sql",
            "V1_5__holdfast_leases_queue.sql", "V1_6__holdfast_leases_handoff.sql",
            "V1_7__holdfast_leases_timelines.sql", "V1_8__holdfast_leases_handoff_mariadb.sql",
            "V1_9__holdfast_leases_waiters_mariadb.sql", "V1_10__holdfast_leases_queue_place.sql");

    /** Longest table name the installer accepts: index names append up to 14 characters. */
    public static final int MAX_NAME_LENGTH = 48;

    private final String defaultName;
    private final List<String> scripts;

    HoldfastTable(String defaultName, String... scripts) {
        this.defaultName = defaultName;
        this.scripts = List.of(scripts);
    }

    /** The table name used when none is configured. */
    public String defaultName() {
        return defaultName;
    }

    /** The file names of the table's scripts inside each dialect's folder, in the order they run. */
    public List<String> scripts() {
        return scripts;
    }

    /** The Flyway placeholder the script uses for the table name: {@code <defaultName>_table}. */
    public String placeholder() {
        return defaultName + "_table";
    }
}
