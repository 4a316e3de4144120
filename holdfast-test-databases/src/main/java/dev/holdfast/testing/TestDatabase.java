package dev.holdfast.testing;

import com.zaxxer.hikari.HikariDataSource;
import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * One database of the test matrix, as seen by one test run: its shared pool, unique names for the
 * tables this run creates (dropped when it ends), and extra pools (closed when it ends).
 */
public final class TestDatabase {

    /** The database systems of the matrix, with where to find each one directly. */
    public enum Kind {
        /** In-process; {@code HOLDFAST_H2_URL} (default an in-memory database). */
        H2,
        /** {@code HOLDFAST_POSTGRESQL_URL}, {@code _USER}, {@code _PASSWORD}. */
        POSTGRESQL,
        /** {@code HOLDFAST_MARIADB_URL}, {@code _USER}, {@code _PASSWORD}. */
        MARIADB;

        /** Lower-case name, as in display names: {@code h2}, {@code postgresql}, {@code mariadb}. */
        public String id() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** The entry that reaches this database directly. */
        public Entry direct() {
            return Entry.valueOf(name());
        }

        public String url() {
            return direct().url();
        }

        public String user() {
            return direct().user();
        }

        public String password() {
            return direct().password();
        }

        /** A new pool for this database, for benchmarks and tools; the caller closes it. */
        public HikariDataSource newPool(String poolName, int maxSize) {
            return direct().newPool(poolName, maxSize);
        }

        /** {@code HOLDFAST_<KIND>_<suffix>} from {@code source}, else the default. */
        String setting(String suffix, String fallback, java.util.function.UnaryOperator<String> source) {
            return direct().setting(suffix, fallback, source);
        }
    }

    /**
     * The entries of the matrix: a database and the way to it. {@code HOLDFAST_TEST_DATABASES} lists
     * entries ({@link #id()}s, default {@code h2,postgresql,mariadb}); {@code @DatabaseTest(only = ...)}
     * names database {@link Kind}s, so a PostgreSQL test runs through every PostgreSQL entry.
     */
    public enum Entry {
        /** {@code HOLDFAST_H2_URL}. */
        H2(Kind.H2, "jdbc:h2:mem:holdfast-test;DB_CLOSE_DELAY=-1", "sa", ""),
        /** {@code HOLDFAST_POSTGRESQL_URL}, {@code _USER}, {@code _PASSWORD}. */
        POSTGRESQL(Kind.POSTGRESQL, "jdbc:postgresql://127.0.0.1:5432/test", "postgres", ""),
        /** {@code HOLDFAST_MARIADB_URL}, {@code _USER}, {@code _PASSWORD}. */
        MARIADB(Kind.MARIADB, "jdbc:mariadb://127.0.0.1:3306/test", "root", ""),
        /**
         * PostgreSQL through PgBouncer in transaction pooling mode ({@code scripts/pgbouncer.sh up}):
         * {@code HOLDFAST_PGBOUNCER_URL}, {@code _USER}, {@code _PASSWORD}. {@code prepareThreshold=0}:
         * PgBouncer before 1.21 cannot keep pgjdbc's named server-side statements in this mode.
         */
        PGBOUNCER(Kind.POSTGRESQL, "jdbc:postgresql://127.0.0.1:6432/test?prepareThreshold=0", "postgres", ""),
        /**
         * PostgreSQL through PgBouncer in session pooling mode: {@code HOLDFAST_PGBOUNCER_SESSION_URL},
         * {@code _USER}, {@code _PASSWORD}.
         */
        PGBOUNCER_SESSION(Kind.POSTGRESQL, "jdbc:postgresql://127.0.0.1:6432/test_session", "postgres", "");

        private final Kind kind;
        private final String defaultUrl;
        private final String defaultUser;
        private final String defaultPassword;

        Entry(Kind kind, String defaultUrl, String defaultUser, String defaultPassword) {
            this.kind = kind;
            this.defaultUrl = defaultUrl;
            this.defaultUser = defaultUser;
            this.defaultPassword = defaultPassword;
        }

        /** The database behind this entry. */
        public Kind kind() {
            return kind;
        }

        /** Lower-case name, as in display names and {@code HOLDFAST_TEST_DATABASES}: {@code pgbouncer}, ... */
        public String id() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** Whether a pooler stands between the client and the server. */
        public boolean pooled() {
            return this == PGBOUNCER || this == PGBOUNCER_SESSION;
        }

        public String url() {
            return setting("URL", defaultUrl, System::getenv);
        }

        public String user() {
            return setting("USER", defaultUser, System::getenv);
        }

        public String password() {
            return setting("PASSWORD", defaultPassword, System::getenv);
        }

        /** A new pool for this entry, for benchmarks and tools; the caller closes it. */
        public HikariDataSource newPool(String poolName, int maxSize) {
            return pool(url(), user(), password(), poolName, maxSize);
        }

        /** {@code HOLDFAST_<ENTRY>_<suffix>} from {@code source}, else the default. */
        String setting(String suffix, String fallback, java.util.function.UnaryOperator<String> source) {
            String value = source.apply("HOLDFAST_" + name() + "_" + suffix);
            return value == null ? fallback : value;
        }

        /** What to do about this entry's server when it cannot be reached. */
        String startHint() {
            return pooled() ? "Start PgBouncer with scripts/pgbouncer.sh up (apt-get install -y pgbouncer first)." : "";
        }
    }

    private static final AtomicInteger COUNTER = new AtomicInteger();
    private static final Duration CONNECTION_TIMEOUT = Duration.ofSeconds(10);

    private final Entry entry;
    private final HikariDataSource shared;
    private final Scratch scratch = new Scratch();
    private @Nullable HikariDataSource direct;

    TestDatabase(Entry entry, HikariDataSource shared) {
        this.entry = entry;
        this.shared = shared;
    }

    /** The database system (PostgreSQL also through PgBouncer). */
    public Kind kind() {
        return entry.kind();
    }

    /** The entry of the matrix: the database and the way to it. */
    public Entry entry() {
        return entry;
    }

    /** Same as {@code entry().id()}, as in display names: {@code postgresql}, {@code pgbouncer}, ... */
    public String id() {
        return entry.id();
    }

    /** The pool shared by every test of this run (20 connections at most). */
    public DataSource dataSource() {
        return shared;
    }

    /**
     * A data source that reaches the database with no pooler between: the shared pool, or for an
     * entry through PgBouncer a pool of its own (10 connections) to the database's direct URL, closed
     * when the test ends. For what must bypass a pooler, such as a lease listener's {@code LISTEN}.
     */
    public synchronized DataSource directDataSource() {
        if (!entry.pooled()) {
            return shared;
        }
        if (direct == null) {
            Entry to = entry.kind().direct();
            direct = scratch.newPool(to.url(), to.user(), to.password(), "holdfast-test-direct-" + COUNTER.incrementAndGet(),
                    10, CONNECTION_TIMEOUT);
        }
        return direct;
    }

    /**
     * A new pool of its own with {@code maxSize} connections that reaches the database with no pooler
     * between (the database's direct URL); closed when the test ends. Same as {@link #newPool} for an
     * entry without a pooler.
     */
    public HikariDataSource newDirectPool(int maxSize) {
        Entry to = entry.kind().direct();
        return scratch.newPool(to.url(), to.user(), to.password(), "holdfast-test-direct-" + COUNTER.incrementAndGet(),
                maxSize, CONNECTION_TIMEOUT);
    }

    /**
     * A new pool of its own with {@code maxSize} connections that signs in as {@code user} (one a test created, with
     * an empty password) and reaches the database with no pooler between; closed when the test ends. On H2 the URL
     * loses its settings ({@code ;DB_CLOSE_DELAY=-1}), which only an admin may give: the database is open already.
     */
    public HikariDataSource newPoolAs(String user, int maxSize) {
        Entry to = entry.kind().direct();
        String url = entry.kind() == Kind.H2 ? to.url().replaceAll(";.*", "") : to.url();
        return scratch.newPool(url, user, "", "holdfast-test-" + user + "-" + COUNTER.incrementAndGet(),
                maxSize, CONNECTION_TIMEOUT);
    }

    /** A connection from the shared pool; the caller closes it. */
    public Connection connection() throws SQLException {
        return shared.getConnection();
    }

    /**
     * A new pool of its own with {@code maxSize} connections, as a separate server would have;
     * closed when the test ends.
     */
    public HikariDataSource newPool(int maxSize) {
        return scratch.newPool(shared.getJdbcUrl(), shared.getUsername(), shared.getPassword(),
                "holdfast-test-extra-" + COUNTER.incrementAndGet(), maxSize, CONNECTION_TIMEOUT);
    }

    /**
     * A table name no other test (in this or another JVM) uses: {@code prefix_<random>}. The table
     * is dropped, if it exists, when the test ends.
     */
    public String newTableName(String prefix) {
        return scratch.newTableName(prefix);
    }

    /**
     * Drops {@code table} (if it exists) when the test ends, for tables a test did not name itself,
     * such as companions an installer derives from a {@link #newTableName} name.
     */
    public void dropAfterTest(String table) {
        scratch.dropAfterTest(table);
    }

    /** Runs one statement in auto-commit mode; returns its update count. */
    public int execute(String sql, Object... parameters) throws SQLException {
        return Scratch.execute(shared, sql, parameters);
    }

    /** Runs a query expected to return one number in one row. */
    public long queryLong(String sql, Object... parameters) throws SQLException {
        return Scratch.queryOne(shared, Long.class, sql, parameters);
    }

    /** Runs a query expected to return one value in one row, as a string. */
    public String queryString(String sql, Object... parameters) throws SQLException {
        return Scratch.queryOne(shared, String.class, sql, parameters);
    }

    void cleanUp() throws SQLException {
        scratch.cleanUp(() -> shared);
    }

    static HikariDataSource pool(String url, String user, String password, String name, int maxSize) {
        return Scratch.pool(url, user, password, name, maxSize, CONNECTION_TIMEOUT);
    }

    @Override
    public String toString() {
        return entry.id();
    }
}
