package dev.holdfast.spring.boot;

import dev.holdfast.jdbc.CommitDurability;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.lease.Batching;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.sql.init.DatabaseInitializationMode;

import java.time.Duration;

/**
 * Settings under holdfast.*.
 */
@ConfigurationProperties("holdfast")
public class HoldfastProperties {

    /** Whether Holdfast configures itself from the application's DataSource. */
    private boolean enabled = true;

    /**
     * The database dialect: H2, POSTGRESQL or MARIADB. Empty (the default) detects it from the
     * DataSource, which borrows one connection at startup.
     */
    private @Nullable Dialect dialect;

    /**
     * A name for the application's connections in the database's session views, so that a lock's
     * blocker is recognisable: PostgreSQL application_name, MariaDB connection attribute
     * program_name. Applied to a HikariCP pool whose configuration names none; empty (the default)
     * leaves the connections as they are.
     */
    private @Nullable String applicationName;

    private final Jdbc jdbc = new Jdbc();

    private final Offline offline = new Offline();

    private final Lease lease = new Lease();

    private final Pessimistic pessimistic = new Pessimistic();

    private final Web web = new Web();

    /** {@return whether Holdfast configures itself from the application's DataSource} */
    public boolean isEnabled() {
        return enabled;
    }

    /**
     * Sets whether Holdfast configures itself from the application's DataSource.
     *
     * @param enabled false to turn Holdfast's auto-configuration off
     */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /** {@return the database dialect, or null to detect it from the DataSource} */
    public @Nullable Dialect getDialect() {
        return dialect;
    }

    /**
     * Sets the database dialect.
     *
     * @param dialect the dialect, or null to detect it from the DataSource (one connection borrowed at startup)
     */
    public void setDialect(@Nullable Dialect dialect) {
        this.dialect = dialect;
    }

    /** {@return the name for the application's connections in the database's session views, or null for none} */
    public @Nullable String getApplicationName() {
        return applicationName;
    }

    /**
     * Sets the name for the application's connections in the database's session views.
     *
     * @param applicationName the name, applied to a HikariCP pool whose configuration names none; null leaves the
     *                        connections as they are
     */
    public void setApplicationName(@Nullable String applicationName) {
        this.applicationName = applicationName;
    }

    /** {@return the settings under holdfast.jdbc.*} */
    public Jdbc getJdbc() {
        return jdbc;
    }

    /** {@return the settings under holdfast.offline.*} */
    public Offline getOffline() {
        return offline;
    }

    /** {@return the settings under holdfast.lease.*} */
    public Lease getLease() {
        return lease;
    }

    /** {@return the settings under holdfast.pessimistic.*} */
    public Pessimistic getPessimistic() {
        return pessimistic;
    }

    /** Settings under holdfast.pessimistic.*: row locks (PessimisticLocks). */
    public static class Pessimistic {

        /**
         * Whether a lock timeout names the sessions that blocked it, read through a pooled
         * connection while a wait nears its bound (no cost for a lock that ends in time).
         */
        private boolean nameBlockers = true;

        /** {@return whether a lock timeout names the sessions that blocked it} */
        public boolean isNameBlockers() {
            return nameBlockers;
        }

        /**
         * Sets whether a lock timeout names the sessions that blocked it.
         *
         * @param nameBlockers true (the default) to observe a wait that nears its bound through a pooled connection;
         *                     false to leave every timeout's blockers unknown
         */
        public void setNameBlockers(boolean nameBlockers) {
            this.nameBlockers = nameBlockers;
        }
    }

    /** {@return the settings under holdfast.web.*} */
    public Web getWeb() {
        return web;
    }

    /** Settings under holdfast.lease.*: distributed leases (LeaseService). */
    public static class Lease {

        /** The leases table, a plain SQL identifier (optionally schema-qualified). */
        private String table = "holdfast_leases";

        /**
         * How releases commit: relaxed (the default) lets a release on PostgreSQL skip the wait
         * for the WAL flush (its own statement only); durable waits. Acquires and renewals are
         * always durable.
         */
        private CommitDurability durability = CommitDurability.RELAXED;

        /**
         * Cohort hand-off: how many times in a row a release may pass a lease in memory to a waiting
         * lock call of this instance with the same owner, before it goes back to the database
         * queue (0, the default, turns it off). Fencing tokens stay strictly increasing.
         */
        private int cohortHandOffs;

        /**
         * Batched commits: off (the default): every call a statement of its own, and no batching
         * machinery is built; concurrent: concurrent tryAcquire and release calls of this instance
         * share multi-row statements, one commit each. PostgreSQL and MariaDB; ignored on H2.
         */
        private Batching batching = Batching.OFF;

        /** {@return the leases table, a plain SQL identifier, optionally schema-qualified} */
        public String getTable() {
            return table;
        }

        /**
         * Sets the leases table.
         *
         * @param table a plain SQL identifier, optionally schema-qualified (default holdfast_leases)
         */
        public void setTable(String table) {
            this.table = table;
        }

        /** {@return how lease releases commit} */
        public CommitDurability getDurability() {
            return durability;
        }

        /**
         * Sets how lease releases commit; acquires and renewals are always durable.
         *
         * @param durability RELAXED (the default) lets a release on PostgreSQL skip the wait for the WAL flush; DURABLE
         *                   waits
         */
        public void setDurability(CommitDurability durability) {
            this.durability = durability;
        }

        /** {@return how many times in a row a release may pass a lease in memory to a waiting lock call; 0 if off} */
        public int getCohortHandOffs() {
            return cohortHandOffs;
        }

        /**
         * Sets how many times in a row a release may pass a lease in memory to a waiting lock call of this instance
         * with the same owner, before the lease goes back to the database queue.
         *
         * @param cohortHandOffs 0 (the default: off) to 10,000; another value fails the lease service's creation
         */
        public void setCohortHandOffs(int cohortHandOffs) {
            this.cohortHandOffs = cohortHandOffs;
        }

        /** {@return how concurrent lease calls of this instance share statements and commits} */
        public Batching getBatching() {
            return batching;
        }

        /**
         * Sets how concurrent lease calls of this instance share statements and commits.
         *
         * @param batching the mode (default OFF; CONCURRENT is opt-in)
         */
        public void setBatching(Batching batching) {
            this.batching = batching;
        }
    }

    /** Settings under holdfast.jdbc.*. */
    public static class Jdbc {

        /**
         * When Holdfast's tables (and on H2 the database clock function) are created at startup, with
         * idempotent DDL: EMBEDDED (only on an embedded database such as in-memory H2), ALWAYS, or NEVER
         * (production schemas usually come from Flyway or Liquibase, which can run the same scripts).
         */
        private DatabaseInitializationMode initializeSchema = DatabaseInitializationMode.EMBEDDED;

        /**
         * Whether the start fails when Holdfast's tables or some of their columns are missing (checked
         * after every database initializer, Flyway and Liquibase included, with one statement per
         * table that reads no row), with a report that says how to create them.
         */
        private boolean schemaCheck = true;

        /** {@return when Holdfast's tables are created at startup} */
        public DatabaseInitializationMode getInitializeSchema() {
            return initializeSchema;
        }

        /**
         * Sets when Holdfast's tables (and on H2 the database clock function) are created at startup.
         *
         * @param initializeSchema EMBEDDED (the default: only on an embedded database), ALWAYS or NEVER
         */
        public void setInitializeSchema(DatabaseInitializationMode initializeSchema) {
            this.initializeSchema = initializeSchema;
        }

        /** {@return whether the start fails when Holdfast's tables or some of their columns are missing} */
        public boolean isSchemaCheck() {
            return schemaCheck;
        }

        /**
         * Sets whether the start fails when Holdfast's tables or some of their columns are missing.
         *
         * @param schemaCheck true (the default) to check the tables at startup; false to skip the check
         */
        public void setSchemaCheck(boolean schemaCheck) {
            this.schemaCheck = schemaCheck;
        }
    }

    /** Settings under holdfast.offline.*: the offline pessimistic locks (LockManager). */
    public static class Offline {

        /** The offline locks table, a plain SQL identifier (optionally schema-qualified). */
        private String table = "holdfast_locks";

        /** How long a lock lives unless extended, when tryLock is not given an expiry. */
        private Duration defaultExpiry = Duration.ofMinutes(5);

        /** Longest expiry or increment accepted, and the cap on any extended expiry from now. */
        private Duration maxExpiry = Duration.ofDays(1);

        /**
         * Whether every check, release and extension must name the owner (owner-less calls are then
         * refused with IllegalStateException), so no call can forget to prove whose lock it is. Off by
         * default, as in JdbcLockManager's builder, so the seed's owner-less calls work; turn it on where
         * lock ids travel through browsers.
         */
        private boolean ownerBinding;

        /**
         * RELAXED: on PostgreSQL, tryLock and releaseLock do not wait for the WAL flush (a crash can
         * lose only recent lock operations, which checkLock then catches). DURABLE: every operation waits.
         */
        private CommitDurability durability = CommitDurability.RELAXED;

        /** {@return the offline locks table, a plain SQL identifier, optionally schema-qualified} */
        public String getTable() {
            return table;
        }

        /**
         * Sets the offline locks table.
         *
         * @param table a plain SQL identifier, optionally schema-qualified (default holdfast_locks)
         */
        public void setTable(String table) {
            this.table = table;
        }

        /** {@return how long a lock lives unless extended, when tryLock is not given an expiry} */
        public Duration getDefaultExpiry() {
            return defaultExpiry;
        }

        /**
         * Sets how long a lock lives unless extended, when tryLock is not given an expiry.
         *
         * @param defaultExpiry at least 1 ms and at most max-expiry (default 5 minutes); another value fails the lock
         *                      manager's creation
         */
        public void setDefaultExpiry(Duration defaultExpiry) {
            this.defaultExpiry = defaultExpiry;
        }

        /** {@return the longest expiry or increment accepted, and the cap on any extended expiry from now} */
        public Duration getMaxExpiry() {
            return maxExpiry;
        }

        /**
         * Sets the longest expiry or increment accepted, and the cap on any extended expiry from now.
         *
         * @param maxExpiry 1 ms to 365 days, and not shorter than default-expiry (default 1 day); another value fails
         *                  the lock manager's creation
         */
        public void setMaxExpiry(Duration maxExpiry) {
            this.maxExpiry = maxExpiry;
        }

        /** {@return whether every check, release and extension of an offline lock must name the owner} */
        public boolean isOwnerBinding() {
            return ownerBinding;
        }

        /**
         * Sets whether every check, release and extension of an offline lock must name the owner.
         *
         * @param ownerBinding true to refuse owner-less calls with IllegalStateException; false (the default) to accept
         *                     them
         */
        public void setOwnerBinding(boolean ownerBinding) {
            this.ownerBinding = ownerBinding;
        }

        /** {@return whether tryLock and releaseLock wait for a durable commit} */
        public CommitDurability getDurability() {
            return durability;
        }

        /**
         * Sets whether tryLock and releaseLock wait for a durable commit.
         *
         * @param durability RELAXED (the default: on PostgreSQL they do not wait for the WAL flush) or DURABLE (every
         *                   operation waits)
         */
        public void setDurability(CommitDurability durability) {
            this.durability = durability;
        }
    }

    /** Settings under holdfast.web.*: the Spring MVC helpers. */
    public static class Web {

        /**
         * How often an open edit page extends its offline lock (heartbeat.js), and by how much each
         * extension moves the expiry. Keep it well below holdfast.offline.default-expiry.
         */
        private Duration heartbeatInterval = Duration.ofMinutes(1);

        /**
         * The view that renders lock conflicts and bad lock ids for browsers (model attribute
         * "lockProblem"). Empty: a small built-in HTML page.
         */
        private @Nullable String lockProblemView;

        /**
         * The view that renders version conflicts for browsers (model attribute "versionProblem").
         * Empty: a small built-in HTML page.
         */
        private @Nullable String conflictView;

        /** {@return the view that renders version conflicts for browsers, or null for the built-in HTML page} */
        public @Nullable String getConflictView() {
            return conflictView;
        }

        /**
         * Sets the view that renders version conflicts for browsers.
         *
         * @param conflictView a view name (model attribute "versionProblem"), or null for the built-in HTML page
         */
        public void setConflictView(@Nullable String conflictView) {
            this.conflictView = conflictView;
        }

        /**
         * {@return how often an open edit page extends its offline lock, and by how much each extension moves the
         * expiry}
         */
        public Duration getHeartbeatInterval() {
            return heartbeatInterval;
        }

        /**
         * Sets how often an open edit page extends its offline lock, and by how much each extension moves the expiry.
         *
         * @param heartbeatInterval more than 0 (default 1 minute), well below holdfast.offline.default-expiry; another
         *                          value fails the heartbeat's creation
         */
        public void setHeartbeatInterval(Duration heartbeatInterval) {
            this.heartbeatInterval = heartbeatInterval;
        }

        /**
         * {@return the view that renders lock conflicts and bad lock ids for browsers, or null for the built-in HTML
         * page}
         */
        public @Nullable String getLockProblemView() {
            return lockProblemView;
        }

        /**
         * Sets the view that renders lock conflicts and bad lock ids for browsers.
         *
         * @param lockProblemView a view name (model attribute "lockProblem"), or null for the built-in HTML page
         */
        public void setLockProblemView(@Nullable String lockProblemView) {
            this.lockProblemView = lockProblemView;
        }
    }

    // the switches read by the metrics and observation auto-configurations, here so that they are documented
    private final Metrics metrics = new Metrics();

    private final Observations observations = new Observations();

    /** {@return the settings under holdfast.metrics.*} */
    public Metrics getMetrics() {
        return metrics;
    }

    /** {@return the settings under holdfast.observations.*} */
    public Observations getObservations() {
        return observations;
    }

    /** Settings under holdfast.metrics.*: Micrometer meters. */
    public static class Metrics {

        /**
         * Whether Holdfast's locks and leases are metered, when micrometer-core is on the class path and a
         * MeterRegistry bean exists.
         */
        private boolean enabled = true;

        /** {@return whether Holdfast's locks and leases are metered} */
        public boolean isEnabled() {
            return enabled;
        }

        /**
         * Sets whether Holdfast's locks and leases are metered.
         *
         * @param enabled true (the default) to meter them when micrometer-core is on the class path and a MeterRegistry
         *                bean exists; false to register no Holdfast meters
         */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /** Settings under holdfast.observations.*: Micrometer observations (timers, spans). */
    public static class Observations {

        /**
         * Whether Holdfast's lock waits and acquires are observed, when micrometer-observation is on the class
         * path and an ObservationRegistry bean exists.
         */
        private boolean enabled = true;

        /** {@return whether Holdfast's lock waits and acquires are observed} */
        public boolean isEnabled() {
            return enabled;
        }

        /**
         * Sets whether Holdfast's lock waits and acquires are observed.
         *
         * @param enabled true (the default) to observe them when micrometer-observation is on the class path and an
         *                ObservationRegistry bean exists; false to create no Holdfast observations
         */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }
}
