package dev.holdfast.pessimistic;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.LockWaits;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Transactions that hold and wait for rows of one table ({@code id}, {@code val}), each on a
 * connection of its own from a pool of their own: the blockers a test's lock runs into. Closing
 * ends them in the order they began, each after the wait it started in the background.
 */
final class BlockingSessions implements AutoCloseable {

    /** One transaction: its connection and the database's id of its session. */
    record Session(String name, Connection connection, String id) {}

    /** The text of a background lock: a literal and a bind value that must never be shown. */
    static final String SECRET_LITERAL = "literal-secret";

    static final String SECRET_BIND = "bind-secret";

    final TestDatabase db;
    final String table;
    private final HikariDataSource pool;
    private final Map<Session, Future<?>> sessions = new LinkedHashMap<>();
    private final ExecutorService background = Executors.newCachedThreadPool();
    private int waiting;

    BlockingSessions(TestDatabase db, int rows) throws SQLException {
        this.db = db;
        this.table = db.newTableName("blockers");
        db.execute("CREATE TABLE " + table + " (id BIGINT PRIMARY KEY, val VARCHAR(100) NOT NULL)");
        for (long id = 1; id <= rows; id++) {
            db.execute("INSERT INTO " + table + " (id, val) VALUES (?, ?)", id, "v" + id);
        }
        this.pool = db.newPool(6);
    }

    /**
     * A new transaction named {@code name}: on PostgreSQL its {@code application_name} is
     * {@code holdfast-test-<name>}; on H2 its lock waits last up to 30 s (the default is 2 s).
     */
    Session begin(String name) throws SQLException {
        Connection c = pool.getConnection();
        if (db.kind() == TestDatabase.Kind.POSTGRESQL) {
            run(c, "SET application_name = 'holdfast-test-" + name + "'");
        } else if (db.kind() == TestDatabase.Kind.H2) {
            run(c, "SET LOCK_TIMEOUT 30000");
        }
        c.setAutoCommit(false);
        Session session = new Session(name, c, sessionId(db, c));
        sessions.put(session, null);
        return session;
    }

    /** The session id of {@code c}, asked of the database. */
    static String sessionId(TestDatabase db, Connection c) throws SQLException {
        String sql = switch (db.kind()) {
            case POSTGRESQL -> "SELECT pg_backend_pid()";
            case MARIADB -> "SELECT CONNECTION_ID()";
            case H2 -> "SELECT SESSION_ID()";
        };
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    /** {@code session} locks row {@code id} (free: returns at once). */
    void lock(Session session, long id) throws SQLException {
        select(session.connection(), id, " FOR UPDATE");
    }

    /** {@code session} share-locks row {@code id} (PostgreSQL, MariaDB). */
    void share(Session session, long id) throws SQLException {
        select(session.connection(), id, db.kind() == TestDatabase.Kind.MARIADB ? " LOCK IN SHARE MODE" : " FOR SHARE");
    }

    /**
     * {@code session} starts to lock row {@code id}, held by another, in the background, with a
     * literal and a bind value in its text; returns once the database shows it waiting.
     */
    void waitFor(Session session, long id) {
        waitFor(
                session,
                id,
                "SELECT val FROM %s WHERE id = ? AND val <> '" + SECRET_LITERAL + "' AND val <> ? FOR UPDATE");
    }

    /**
     * {@code session} starts to run {@code statement} in the background, with this table for its
     * {@code %s}, {@code id} for its first parameter and {@link #SECRET_BIND} for its second, if any
     * (no other question mark in its text):
     * a statement that locks row {@code id}, held by another. Returns once the database shows it waiting.
     */
    void waitFor(Session session, long id, String statement) {
        String sql = statement.formatted(table);
        sessions.put(session, background.submit(() -> {
            try (PreparedStatement ps = session.connection().prepareStatement(sql)) {
                ps.setLong(1, id);
                if (sql.chars().filter(c -> c == '?').count() > 1) {
                    ps.setString(2, SECRET_BIND);
                }
                ps.executeQuery().close();
            }
            return null;
        }));
        waiting++;
        LockWaits.awaitWaitingForALock(db, "%FROM " + table + "%", waiting);
    }

    private void select(Connection c, long id, String lock) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT val FROM " + table + " WHERE id = ?" + lock)) {
            ps.setLong(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
            }
        }
    }

    private static void run(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    /**
     * Ends every transaction once its background wait has ended, in the order the locks are granted:
     * H2 does not grant in arrival order, so a later waiter may hold the row an earlier one waits for.
     */
    @Override
    public void close() throws Exception {
        List<Exception> failures = new ArrayList<>();
        Map<Session, Future<?>> open = new LinkedHashMap<>(sessions);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!open.isEmpty()) {
            Map.Entry<Session, Future<?>> next = open.entrySet().stream()
                    .filter(e -> e.getValue() == null || e.getValue().isDone())
                    .findFirst()
                    .orElse(null);
            if (next == null) {
                Future<?> first = open.values().iterator().next();
                try {
                    first.get(10, TimeUnit.MILLISECONDS); // a wait ends when a lock is granted
                } catch (java.util.concurrent.TimeoutException waiting) {
                    if (System.nanoTime() - deadline > 0) {
                        failures.add(waiting);
                        next = open.entrySet().iterator().next(); // end it anyway, so the others go on
                    }
                } catch (Exception ended) {
                    // its failure is taken below
                }
                if (next == null) {
                    continue;
                }
            }
            try {
                if (next.getValue() != null && next.getValue().isDone()) {
                    next.getValue().get();
                }
            } catch (Exception failure) {
                failures.add(failure);
            }
            Connection c = next.getKey().connection();
            c.rollback();
            c.setAutoCommit(true);
            c.close();
            open.remove(next.getKey());
        }
        background.shutdownNow();
        if (!failures.isEmpty()) {
            throw failures.get(0);
        }
    }
}
