package dev.holdfast;

import dev.holdfast.testing.TestDatabase;

import java.time.Duration;
import java.util.Arrays;

import static org.awaitility.Awaitility.await;

/**
 * Waits, by asking the database, until statements wait for a lock: the condition a test means when
 * it lets a competitor "get there" before it goes on.
 */
public final class LockWaits {

    /** How long a statement may take to reach its lock wait on a saturated machine. */
    public static final Duration AT_MOST = Duration.ofSeconds(30);

    private LockWaits() {}

    /**
     * Waits until at least {@code statements} statements of other sessions whose text is LIKE
     * {@code like} wait for a lock: a row lock, or on PostgreSQL and MariaDB a table or metadata lock
     * (H2 shows no wait for a table lock: see {@link #awaitWaitingForAnH2TableLock}).
     */
    public static void awaitWaitingForALock(TestDatabase db, String like, long statements) {
        String sql = switch (db.kind()) {
            case POSTGRESQL ->
                "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                        + " AND pid <> pg_backend_pid() AND query LIKE ?";
            case MARIADB ->
                "SELECT (SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT'"
                        + " AND trx_query LIKE ?) + (SELECT COUNT(*) FROM information_schema.processlist"
                        + " WHERE state LIKE 'Waiting for %lock' AND info LIKE ?)";
            case H2 ->
                "SELECT COUNT(*) FROM information_schema.sessions WHERE blocker_id IS NOT NULL"
                        + " AND executing_statement LIKE ?";
        };
        Object[] parameters = db.kind() == TestDatabase.Kind.MARIADB ? new Object[] {like, like} : new Object[] {like};
        await(statements + " statement(s) LIKE '" + like + "' waiting for a lock on " + db.id())
                .atMost(AT_MOST)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(10))
                .until(() -> LockViews.read(db, () -> db.queryLong(sql, parameters)) >= statements);
    }

    /**
     * Embedded H2 runs a statement on the caller's thread and lists no waiting session for a table
     * lock (its {@code SESSIONS.BLOCKER_ID} names row-lock waits only): waits until {@code thread}
     * waits inside H2's table lock.
     */
    public static void awaitWaitingForAnH2TableLock(Thread thread) {
        await(thread.getName() + " waiting for an H2 table lock")
                .atMost(AT_MOST)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(10))
                .until(() ->
                        (thread.getState() == Thread.State.WAITING || thread.getState() == Thread.State.TIMED_WAITING)
                                && Arrays.stream(thread.getStackTrace())
                                        .anyMatch(frame -> frame.getClassName().startsWith("org.h2.")
                                                && frame.getMethodName().startsWith("doLock")));
    }
}
