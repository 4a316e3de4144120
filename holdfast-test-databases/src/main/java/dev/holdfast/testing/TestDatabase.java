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

        /** {@return the lower-case name, as in display names: {@code h2}, {@code postgresql}, {@code mariadb}} */
        public String id() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** {@return the entry that reaches this database directly, with no pooler between} */
        public Entry direct() {
            return Entry.valueOf(name());
        }

        /**
         * {@return the JDBC URL that reaches this database directly: {@code HOLDFAST_<KIND>_URL} from the
         * environment (not from JUnit configuration parameters), else the default}
         */
        public String url() {
            return direct().url();
        }

        /**
         * {@return the user to sign in as: {@code HOLDFAST_<KIND>_USER} from the environment (not from JUnit
         * configuration parameters), else the default ({@code sa}, {@code postgres}, {@code root})}
         */
        public String user() {
            return direct().user();
        }

        /**
         * {@return the user's password: {@code HOLDFAST_<KIND>_PASSWORD} from the environment (not from JUnit
         * configuration parameters), else empty}
         */
        public String password() {
            return direct().password();
        }

        /**
         * Creates a new pool for this database, reached directly ({@link #url()}, {@link #user()},
         * {@link #password()}), for benchmarks and tools. The pool opens no connection before one is asked
         * for, so an unreachable server shows only then; it waits at most 10 seconds for one.
         *
         * @param poolName the pool's name, as HikariCP shows it in its log and thread names
         * @param maxSize  the most connections the pool holds; at least 1
         * @return the new pool, which the caller closes
         * @throws IllegalArgumentException if {@code maxSize} is less than 1
         */
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

        /** {@return the database behind this entry} */
        public Kind kind() {
            return kind;
        }

        /**
         * {@return the lower-case name, as in display names and {@code HOLDFAST_TEST_DATABASES}:
         * {@code postgresql}, {@code pgbouncer}, {@code pgbouncer_session}, ...}
         */
        public String id() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** {@return whether a pooler (PgBouncer) stands between the client and the server} */
        public boolean pooled() {
            return this == PGBOUNCER || this == PGBOUNCER_SESSION;
        }

        /**
         * {@return the JDBC URL of this entry: {@code HOLDFAST_<ENTRY>_URL} from the environment (not from
         * JUnit configuration parameters), else the default}
         */
        public String url() {
            return setting("URL", defaultUrl, System::getenv);
        }

        /**
         * {@return the user to sign in as: {@code HOLDFAST_<ENTRY>_USER} from the environment (not from JUnit
         * configuration parameters), else the default ({@code sa}, {@code postgres}, {@code root})}
         */
        public String user() {
            return setting("USER", defaultUser, System::getenv);
        }

        /**
         * {@return the user's password: {@code HOLDFAST_<ENTRY>_PASSWORD} from the environment (not from JUnit
         * configuration parameters), else empty}
         */
        public String password() {
            return setting("PASSWORD", defaultPassword, System::getenv);
        }

        /**
         * Creates a new pool for this entry ({@link #url()}, {@link #user()}, {@link #password()}), for
         * benchmarks and tools. The pool opens no connection before one is asked for, so an unreachable
         * server shows only then; it waits at most 10 seconds for one.
         *
         * @param poolName the pool's name, as HikariCP shows it in its log and thread names
         * @param maxSize  the most connections the pool holds; at least 1
         * @return the new pool, which the caller closes
         * @throws IllegalArgumentException if {@code maxSize} is less than 1
         */
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

    /** {@return the database system (PostgreSQL also for an entry through PgBouncer)} */
    public Kind kind() {
        return entry.kind();
    }

    /** {@return the entry of the matrix: the database and the way to it} */
    public Entry entry() {
        return entry;
    }

    /**
     * {@return the entry's id, as in display names: {@code postgresql}, {@code pgbouncer}, ...; same as
     * {@code entry().id()}}
     */
    public String id() {
        return entry.id();
    }

    /**
     * {@return the pool that every test of this run (JVM) on this entry shares: 20 connections at most, 10
     * seconds' wait for one; tests do not close it}
     */
    public DataSource dataSource() {
        return shared;
    }

    /**
     * A data source that reaches the database with no pooler between: the shared pool, or for an
     * entry through PgBouncer a pool of its own (10 connections) to the database's direct URL, closed
     * when the test ends. For what must bypass a pooler, such as a lease listener's {@code LISTEN}.
     *
     * @return the shared pool ({@link #dataSource()}) for an entry without a pooler; else the test's direct
     *         pool, the same one on every call during the test
     */
    public synchronized DataSource directDataSource() {
        if (!entry.pooled()) {
            return shared;
        }
        if (direct == null) {
            Entry to = entry.kind().direct();
            direct = scratch.newPool(
                    to.url(),
                    to.user(),
                    to.password(),
                    "holdfast-test-direct-" + COUNTER.incrementAndGet(),
                    10,
                    CONNECTION_TIMEOUT);
        }
        return direct;
    }

    /**
     * A new pool of its own with {@code maxSize} connections that reaches the database with no pooler
     * between (the database's direct URL); closed when the test ends. Same as {@link #newPool} for an
     * entry without a pooler. The pool waits at most 10 seconds for a connection.
     *
     * @param maxSize the most connections the pool holds; at least 1
     * @return the new pool, which the test may close earlier
     * @throws IllegalArgumentException if {@code maxSize} is less than 1
     */
    public HikariDataSource newDirectPool(int maxSize) {
        Entry to = entry.kind().direct();
        return scratch.newPool(
                to.url(),
                to.user(),
                to.password(),
                "holdfast-test-direct-" + COUNTER.incrementAndGet(),
                maxSize,
                CONNECTION_TIMEOUT);
    }

    /**
     * A new pool of its own with {@code maxSize} connections that signs in as {@code user} (one a test created, with
     * an empty password) and reaches the database with no pooler between; closed when the test ends. On H2 the URL
     * loses its settings ({@code ;DB_CLOSE_DELAY=-1}), which only an admin may give: the database is open already.
     * The pool waits at most 10 seconds for a connection.
     *
     * @param user    the user to sign in as: one the test created, with an empty password
     * @param maxSize the most connections the pool holds; at least 1
     * @return the new pool, which the test may close earlier
     * @throws IllegalArgumentException if {@code maxSize} is less than 1
     */
    public HikariDataSource newPoolAs(String user, int maxSize) {
        Entry to = entry.kind().direct();
        String url = entry.kind() == Kind.H2 ? to.url().replaceAll(";.*", "") : to.url();
        return scratch.newPool(
                url, user, "", "holdfast-test-" + user + "-" + COUNTER.incrementAndGet(), maxSize, CONNECTION_TIMEOUT);
    }

    /**
     * Takes a connection from the shared pool ({@link #dataSource()}).
     *
     * @return the connection, in auto-commit mode; the caller closes it
     * @throws SQLException if the pool has no connection to give within 10 seconds (all in use, or the server
     *                      unreachable)
     */
    public Connection connection() throws SQLException {
        return shared.getConnection();
    }

    /**
     * A new pool of its own with {@code maxSize} connections, as a separate server would have;
     * closed when the test ends. It reaches the database the way the shared pool does (through the
     * entry's pooler, if any) and waits at most 10 seconds for a connection.
     *
     * @param maxSize the most connections the pool holds; at least 1
     * @return the new pool, which the test may close earlier
     * @throws IllegalArgumentException if {@code maxSize} is less than 1
     */
    public HikariDataSource newPool(int maxSize) {
        return scratch.newPool(
                shared.getJdbcUrl(),
                shared.getUsername(),
                shared.getPassword(),
                "holdfast-test-extra-" + COUNTER.incrementAndGet(),
                maxSize,
                CONNECTION_TIMEOUT);
    }

    /**
     * A table name no other test (in this or another JVM) uses: {@code prefix_<random>}. The table
     * is dropped, if it exists, when the test ends; so are the tables whose names begin with it and an
     * underscore (such as an installer's companion tables).
     *
     * @param prefix the start of the name, used as given; the name goes into SQL unquoted, so the prefix is a
     *               plain identifier (letters, digits, underscores)
     * @return {@code prefix}, an underscore and up to 8 random lower-case letters and digits
     */
    public String newTableName(String prefix) {
        return scratch.newTableName(prefix);
    }

    /**
     * Drops {@code table} (if it exists) when the test ends, for tables a test did not name itself,
     * such as companions an installer derives from a {@link #newTableName} name.
     *
     * @param table the table's name as SQL takes it, used unquoted in {@code DROP TABLE IF EXISTS}; unless it
     *              is qualified or quoted, the tables whose names begin with it and an underscore are dropped too
     */
    public void dropAfterTest(String table) {
        scratch.dropAfterTest(table);
    }

    /**
     * Runs one statement in auto-commit mode, on a connection of the shared pool.
     *
     * @param sql        the statement, with a {@code ?} for each parameter
     * @param parameters the values of the {@code ?} placeholders, in order (bound with {@code setObject})
     * @return the statement's update count; 0 for a statement that returns rows
     * @throws SQLException if the pool has no connection to give within 10 seconds, or the statement fails
     */
    public int execute(String sql, Object... parameters) throws SQLException {
        return Scratch.execute(shared, sql, parameters);
    }

    /**
     * Runs a query expected to return one number in one row, on a connection of the shared pool.
     *
     * @param sql        the query, with a {@code ?} for each parameter
     * @param parameters the values of the {@code ?} placeholders, in order (bound with {@code setObject})
     * @return the first column of the first row, as a {@code long}; 0 if it is SQL {@code NULL}
     * @throws SQLException if the query returns no row or fails, or the pool has no connection to give within
     *                      10 seconds
     */
    public long queryLong(String sql, Object... parameters) throws SQLException {
        return Scratch.queryOne(shared, Long.class, sql, parameters);
    }

    /**
     * Runs a query expected to return one value in one row, on a connection of the shared pool.
     *
     * @param sql        the query, with a {@code ?} for each parameter
     * @param parameters the values of the {@code ?} placeholders, in order (bound with {@code setObject})
     * @return the first column of the first row, as a string; {@code null} if it is SQL {@code NULL}
     * @throws SQLException if the query returns no row or fails, or the pool has no connection to give within
     *                      10 seconds
     */
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
