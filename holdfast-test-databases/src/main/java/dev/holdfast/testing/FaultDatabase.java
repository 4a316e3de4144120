package dev.holdfast.testing;

import com.zaxxer.hikari.HikariDataSource;
import org.jspecify.annotations.Nullable;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * A fault server of one {@link FaultTest} run: a dedicated PostgreSQL or MariaDB instance that the
 * test may restart ({@link #restart()}) or stall. Pools and tables the run creates are closed and
 * dropped when it ends.
 */
public final class FaultDatabase {

    private static final AtomicInteger COUNTER = new AtomicInteger();
    private static final Pattern HOST_PORT = Pattern.compile("^(jdbc:[a-z]+://)([^:/]+):(\\d+)(/.*)$");

    private final TestDatabase.Kind kind;
    private final String url;
    private final String user;
    private final String password;
    private final Scratch scratch = new Scratch();
    private @Nullable HikariDataSource admin;

    FaultDatabase(TestDatabase.Kind kind, String url, String user, String password) {
        this.kind = kind;
        this.url = url;
        this.user = user;
        this.password = password;
    }

    static String defaultUrl(TestDatabase.Kind kind) {
        return switch (kind) {
            case POSTGRESQL -> "jdbc:postgresql://127.0.0.1:5433/test";
            case MARIADB -> "jdbc:mariadb://127.0.0.1:3307/test";
            case H2 -> throw new IllegalArgumentException("H2 has no fault server");
        };
    }

    /** {@return the database system: {@link TestDatabase.Kind#POSTGRESQL} or {@link TestDatabase.Kind#MARIADB}} */
    public TestDatabase.Kind kind() {
        return kind;
    }

    /** {@return the database system's id: {@code postgresql} or {@code mariadb}} */
    public String id() {
        return kind.id();
    }

    /** {@return the server's JDBC URL: {@code HOLDFAST_FAULT_<KIND>_URL}, else the default (see {@link FaultTest})} */
    public String url() {
        return url;
    }

    /**
     * {@return the server's host, as the URL names it}
     *
     * @throws IllegalStateException if the URL is not of the form {@code jdbc:<driver>://<host>:<port>/...}
     */
    public String host() {
        return hostPort().group(2);
    }

    /**
     * {@return the server's TCP port, as the URL names it}
     *
     * @throws IllegalStateException if the URL is not of the form {@code jdbc:<driver>://<host>:<port>/...}
     */
    public int port() {
        return Integer.parseInt(hostPort().group(3));
    }

    /**
     * Builds the URL with host and port replaced, e.g. to connect through a proxy.
     *
     * @param host the host to put in, such as a proxy's
     * @param port the TCP port to put in (not checked)
     * @return the URL with {@code host} and {@code port} in place of the server's; database and settings kept
     * @throws IllegalStateException if the URL is not of the form {@code jdbc:<driver>://<host>:<port>/...}
     */
    public String urlVia(String host, int port) {
        Matcher m = hostPort();
        return m.group(1) + host + ":" + port + m.group(4);
    }

    private Matcher hostPort() {
        Matcher m = HOST_PORT.matcher(url);
        if (!m.matches()) {
            throw new IllegalStateException("Cannot read host and port from " + url);
        }
        return m;
    }

    /**
     * A small pool for the test's own statements (set-up, checks); closed when the test ends. It
     * recovers by itself after a restart, as any HikariCP pool does.
     *
     * @return the admin pool: 4 connections at most, 30 seconds' wait for one; the same pool on every call
     *         during the test, which the test does not close
     */
    public synchronized DataSource admin() {
        if (admin == null) {
            admin = Scratch.pool(
                    url,
                    user,
                    password,
                    "holdfast-fault-admin-" + COUNTER.incrementAndGet(),
                    4,
                    Duration.ofSeconds(30));
        }
        return admin;
    }

    /**
     * Creates a new pool to this server, as an application would configure it; closed when the test ends.
     * The pool opens no connection before one is asked for.
     *
     * @param name              the start of the pool's name (HikariCP's log and thread names), to which a
     *                          unique number is appended
     * @param maxSize           the most connections the pool holds; at least 1
     * @param connectionTimeout how long the pool waits for a connection: at least 250 ms (HikariCP's floor),
     *                          or zero for no limit
     * @return the new pool, which the test may close earlier
     * @throws IllegalArgumentException if {@code maxSize} is less than 1, or {@code connectionTimeout} is
     *                                  neither zero nor at least 250 ms
     */
    public HikariDataSource newPool(String name, int maxSize, Duration connectionTimeout) {
        return newPoolAt(url, name, maxSize, connectionTimeout);
    }

    /**
     * Creates a new pool to another URL of this server (e.g. through a proxy, see {@link #urlVia}), signing
     * in as the server's user; closed when the test ends. The pool opens no connection before one is asked for.
     *
     * @param jdbcUrl           the URL to connect to
     * @param name              the start of the pool's name (HikariCP's log and thread names), to which a
     *                          unique number is appended
     * @param maxSize           the most connections the pool holds; at least 1
     * @param connectionTimeout how long the pool waits for a connection: at least 250 ms (HikariCP's floor),
     *                          or zero for no limit
     * @return the new pool, which the test may close earlier
     * @throws IllegalArgumentException if {@code maxSize} is less than 1, or {@code connectionTimeout} is
     *                                  neither zero nor at least 250 ms
     */
    public HikariDataSource newPoolAt(String jdbcUrl, String name, int maxSize, Duration connectionTimeout) {
        return scratch.newPool(
                jdbcUrl, user, password, name + "-" + COUNTER.incrementAndGet(), maxSize, connectionTimeout);
    }

    /**
     * A table name no other test uses: {@code prefix_<random>}. The table is dropped, if it exists, when the
     * test ends; so are the tables whose names begin with it and an underscore.
     *
     * @param prefix the start of the name, used as given; the name goes into SQL unquoted, so the prefix is a
     *               plain identifier (letters, digits, underscores)
     * @return {@code prefix}, an underscore and up to 8 random lower-case letters and digits
     */
    public String newTableName(String prefix) {
        return scratch.newTableName(prefix);
    }

    /**
     * Drops {@code table} (if it exists) when the test ends, for tables a test did not name itself.
     *
     * @param table the table's name as SQL takes it, used unquoted in {@code DROP TABLE IF EXISTS}; unless it
     *              is qualified or quoted, the tables whose names begin with it and an underscore are dropped too
     */
    public void dropAfterTest(String table) {
        scratch.dropAfterTest(table);
    }

    /**
     * Runs one statement in auto-commit mode, on a connection of the admin pool ({@link #admin()}).
     *
     * @param sql        the statement, with a {@code ?} for each parameter
     * @param parameters the values of the {@code ?} placeholders, in order (bound with {@code setObject})
     * @return the statement's update count; 0 for a statement that returns rows
     * @throws SQLException if the admin pool has no connection to give within 30 seconds, or the statement fails
     */
    public int execute(String sql, Object... parameters) throws SQLException {
        return Scratch.execute(admin(), sql, parameters);
    }

    /**
     * Runs a query expected to return one number in one row, on a connection of the admin pool
     * ({@link #admin()}).
     *
     * @param sql        the query, with a {@code ?} for each parameter
     * @param parameters the values of the {@code ?} placeholders, in order (bound with {@code setObject})
     * @return the first column of the first row, as a {@code long}; 0 if it is SQL {@code NULL}
     * @throws SQLException if the query returns no row or fails, or the admin pool has no connection to give
     *                      within 30 seconds
     */
    public long queryLong(String sql, Object... parameters) throws SQLException {
        return Scratch.queryOne(admin(), Long.class, sql, parameters);
    }

    /**
     * Asks the server for the id of a connection's session.
     *
     * @param c an open connection to this server, from any pool; the query runs on it
     * @return PostgreSQL's backend process id ({@code pg_backend_pid()}), a process of this machine that
     *         {@link #signal} can reach; MariaDB's connection id ({@code CONNECTION_ID()}), which is no process id
     * @throws SQLException if the query fails, e.g. on a closed or broken connection
     */
    public long sessionId(Connection c) throws SQLException {
        String sql = kind == TestDatabase.Kind.POSTGRESQL ? "SELECT pg_backend_pid()" : "SELECT CONNECTION_ID()";
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * Restarts the server for real (its process exits, a new one starts) with
     * {@code scripts/fault-servers.sh restart}, and waits until it accepts connections again. The server
     * runs on this machine; the script finds it by the URL's port. How long it took goes to standard output.
     *
     * @return how long the restart took, until a new connection was accepted
     * @throws IOException           if the script cannot be started, exits with a status other than 0, or does
     *                               not finish within 120 seconds
     * @throws InterruptedException  if the thread is interrupted while it waits for the script or the server
     * @throws IllegalStateException if the script is not found ({@link #script()}), or the server accepts no
     *                               connection within 60 seconds after the script
     */
    public Duration restart() throws IOException, InterruptedException {
        return cycle("restart");
    }

    /**
     * Kills the server without a shutdown (PostgreSQL: immediate stop, nothing flushed; MariaDB:
     * SIGKILL) with {@code scripts/fault-servers.sh crash}, starts it again (crash recovery) and
     * waits until it accepts connections. The server runs on this machine; the script finds it by the URL's
     * port. How long it took goes to standard output.
     *
     * @return how long it took, until a new connection was accepted
     * @throws IOException           if the script cannot be started, exits with a status other than 0, or does
     *                               not finish within 120 seconds
     * @throws InterruptedException  if the thread is interrupted while it waits for the script or the server
     * @throws IllegalStateException if the script is not found ({@link #script()}), or the server accepts no
     *                               connection within 60 seconds after the script
     */
    public Duration crash() throws IOException, InterruptedException {
        return cycle("crash");
    }

    private Duration cycle(String command) throws IOException, InterruptedException {
        long start = System.nanoTime();
        String output = run(script().toString(), command, kind.id());
        awaitReachable();
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        System.out.printf("[%s] fault server %s took %d ms (%s)%n", id(), command, took.toMillis(), output.strip());
        return took;
    }

    /**
     * Sends {@code signal} (e.g. {@code STOP}, {@code CONT}) to a local process of the server, with
     * {@code kill}.
     *
     * @param pid    the process's id on this machine, such as a PostgreSQL session's {@link #sessionId}
     * @param signal the signal's name as {@code kill} takes it, without {@code SIG}: {@code STOP}, {@code CONT}, ...
     * @throws IOException          if {@code kill} cannot be started, fails (no such process, not permitted, no
     *                              such signal) or does not finish within 120 seconds
     * @throws InterruptedException if the thread is interrupted while it waits for {@code kill}
     */
    public void signal(long pid, String signal) throws IOException, InterruptedException {
        run("kill", "-" + signal, Long.toString(pid));
    }

    private String run(String... command) throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment()
                .put(
                        kind == TestDatabase.Kind.POSTGRESQL ? "HOLDFAST_FAULT_PG_PORT" : "HOLDFAST_FAULT_MARIADB_PORT",
                        Integer.toString(port()));
        Process process = builder.start();
        byte[] out = process.getInputStream().readAllBytes();
        if (!process.waitFor(120, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IOException(String.join(" ", command) + " did not finish in 120 s");
        }
        String text = new String(out, StandardCharsets.UTF_8);
        if (process.exitValue() != 0) {
            throw new IOException(
                    String.join(" ", command) + " failed with exit code " + process.exitValue() + ": " + text);
        }
        return text;
    }

    /**
     * Finds {@code scripts/fault-servers.sh} by walking up from the working directory.
     *
     * @return the absolute path of the script in the working directory or the nearest of its parents that has one
     * @throws IllegalStateException if neither the working directory nor any of its parents has it
     */
    public static Path script() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path candidate = dir.resolve("scripts").resolve("fault-servers.sh");
            if (Files.isRegularFile(candidate)) {
                return candidate;
            }
        }
        throw new IllegalStateException(
                "scripts/fault-servers.sh not found above " + Path.of("").toAbsolutePath());
    }

    /** Waits (at most 60 s) until the server accepts a new connection. */
    void awaitReachable() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        SQLException last = null;
        while (System.nanoTime() < deadline) {
            try (Connection c = DriverManager.getConnection(url, user, password)) {
                if (c.isValid(5)) {
                    return;
                }
            } catch (SQLException e) {
                last = e;
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException(id() + " fault server did not come back at " + url, last);
    }

    synchronized void cleanUp() throws SQLException {
        try {
            scratch.cleanUp(this::admin);
        } finally {
            if (admin != null) {
                admin.close();
                admin = null;
            }
        }
    }

    @Override
    public String toString() {
        return kind.id() + " fault server";
    }
}
