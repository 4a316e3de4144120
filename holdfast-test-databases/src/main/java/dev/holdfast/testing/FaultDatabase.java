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

    public TestDatabase.Kind kind() {
        return kind;
    }

    /** {@code postgresql} or {@code mariadb}. */
    public String id() {
        return kind.id();
    }

    public String url() {
        return url;
    }

    /** The server's host, from the URL. */
    public String host() {
        return hostPort().group(2);
    }

    /** The server's TCP port, from the URL. */
    public int port() {
        return Integer.parseInt(hostPort().group(3));
    }

    /** The URL with host and port replaced, e.g. to connect through a proxy. */
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
     */
    public synchronized DataSource admin() {
        if (admin == null) {
            admin = Scratch.pool(url, user, password, "holdfast-fault-admin-" + COUNTER.incrementAndGet(), 4,
                    Duration.ofSeconds(30));
        }
        return admin;
    }

    /** A new pool, as an application would configure it, closed when the test ends. */
    public HikariDataSource newPool(String name, int maxSize, Duration connectionTimeout) {
        return newPoolAt(url, name, maxSize, connectionTimeout);
    }

    /** A new pool to another URL of this server (e.g. through a proxy), closed when the test ends. */
    public HikariDataSource newPoolAt(String jdbcUrl, String name, int maxSize, Duration connectionTimeout) {
        return scratch.newPool(jdbcUrl, user, password, name + "-" + COUNTER.incrementAndGet(), maxSize, connectionTimeout);
    }

    /** A table name no other test uses: {@code prefix_<random>}; dropped when the test ends. */
    public String newTableName(String prefix) {
        return scratch.newTableName(prefix);
    }

    /** Drops {@code table} (if it exists) when the test ends. */
    public void dropAfterTest(String table) {
        scratch.dropAfterTest(table);
    }

    /** Runs one statement in auto-commit mode on the admin pool; returns its update count. */
    public int execute(String sql, Object... parameters) throws SQLException {
        return Scratch.execute(admin(), sql, parameters);
    }

    /** Runs a query expected to return one number in one row, on the admin pool. */
    public long queryLong(String sql, Object... parameters) throws SQLException {
        return Scratch.queryOne(admin(), Long.class, sql, parameters);
    }

    /** The server's id of a connection's session: PostgreSQL's backend process id, MariaDB's connection id. */
    public long sessionId(Connection c) throws SQLException {
        String sql = kind == TestDatabase.Kind.POSTGRESQL ? "SELECT pg_backend_pid()" : "SELECT CONNECTION_ID()";
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * Restarts the server for real (its process exits, a new one starts) with
     * {@code scripts/fault-servers.sh restart}, and waits until it accepts connections again.
     *
     * @return how long the restart took
     */
    public Duration restart() throws IOException, InterruptedException {
        return cycle("restart");
    }

    /**
     * Kills the server without a shutdown (PostgreSQL: immediate stop, nothing flushed; MariaDB:
     * SIGKILL) with {@code scripts/fault-servers.sh crash}, starts it again (crash recovery) and
     * waits until it accepts connections.
     *
     * @return how long it took
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

    /** Sends {@code signal} (e.g. {@code STOP}, {@code CONT}) to a local process of the server. */
    public void signal(long pid, String signal) throws IOException, InterruptedException {
        run("kill", "-" + signal, Long.toString(pid));
    }

    private String run(String... command) throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put(kind == TestDatabase.Kind.POSTGRESQL ? "HOLDFAST_FAULT_PG_PORT"
                : "HOLDFAST_FAULT_MARIADB_PORT", Integer.toString(port()));
        Process process = builder.start();
        byte[] out = process.getInputStream().readAllBytes();
        if (!process.waitFor(120, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IOException(String.join(" ", command) + " did not finish in 120 s");
        }
        String text = new String(out, StandardCharsets.UTF_8);
        if (process.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed with exit code " + process.exitValue() + ": " + text);
        }
        return text;
    }

    /** {@code scripts/fault-servers.sh}, found by walking up from the working directory. */
    public static Path script() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path candidate = dir.resolve("scripts").resolve("fault-servers.sh");
            if (Files.isRegularFile(candidate)) {
                return candidate;
            }
        }
        throw new IllegalStateException("scripts/fault-servers.sh not found above " + Path.of("").toAbsolutePath());
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
