package dev.holdfast.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import javax.sql.DataSource;

/**
 * A fair hand-off across MariaDB instances that wakes exactly the waiter it hands to ({@code bareKill@mariadb}
 * in {@link LeaseHandoff}): a measuring stick for a directed wake-up, not a lock (no TTL expiry, liveness,
 * give-up or failure handling). Waiters queue in arrival order; the holder's release hands the row to the
 * first entry (owner, token + 1, in one auto-commit update) and then interrupts that waiter's sleeping
 * statement with {@code KILL QUERY <its connection id>}, so no other waiter wakes and there is no bell whose
 * order drifts from the queue's.
 *
 * <p>Each worker has two connections of its own pool: one for its statements, one to sleep on. It sleeps in
 * {@code SELECT IF(owner = me, 0, SLEEP(30)), token FROM row}: the check and the sleep are one statement, so a
 * kill that comes while it checks still ends the sleep, and a kill that comes between statements (lost) comes
 * after the hand-off committed, which the next statement's check sees. A worker has one entry at most; the
 * releaser deletes the entry it handed to after the kill (off the woken waiter's path), and a holder's release
 * skips and then deletes its own.
 */
final class BareKillQueue {

    static final String TABLE = "holdfast_bench_bare_kill";
    private static final java.util.concurrent.atomic.AtomicLong SEQ = new java.util.concurrent.atomic.AtomicLong();

    private BareKillQueue() {}

    /** {@code workers} workers on MariaDB, each from its own pool (wrapped by {@code counted}). */
    static List<Worker> workers(
            TestDatabase.Kind kind, HikariDataSource admin, int workers, UnaryOperator<DataSource> counted)
            throws SQLException {
        if (kind != TestDatabase.Kind.MARIADB) {
            throw new IllegalArgumentException("KILL QUERY wake-ups are written for MariaDB");
        }
        LeasePeers.execute(
                admin,
                "DROP TABLE IF EXISTS " + TABLE,
                "DROP TABLE IF EXISTS " + TABLE + "_queue",
                "CREATE TABLE " + TABLE + " (name VARCHAR(64) PRIMARY KEY, owner INT NOT NULL, token BIGINT NOT NULL,"
                        + " acquired_at DATETIME(6) NOT NULL) ENGINE=InnoDB",
                "CREATE TABLE " + TABLE
                        + "_queue (worker INT PRIMARY KEY, seq BIGINT NOT NULL, sleeper BIGINT NOT NULL,"
                        + " KEY (seq)) ENGINE=InnoDB",
                "INSERT INTO " + TABLE + " VALUES ('row', -1, 0, UTC_TIMESTAMP(6))");
        List<Worker> all = new ArrayList<>();
        for (int i = 0; i < workers; i++) {
            all.add(new Worker(kind.newPool("bench-kill-" + i, 2), counted, i));
        }
        return all;
    }

    /** One instance: acquire (queue, take the free row or sleep until handed it), release (hand it on), close. */
    static final class Worker implements AutoCloseable {
        private final HikariDataSource pool;
        private final Connection work;
        private final Connection sleeper;
        private final long sleeperId;
        private final int me;
        long token;
        private long entry = -1;

        Worker(HikariDataSource pool, UnaryOperator<DataSource> counted, int me) throws SQLException {
            this.pool = pool;
            this.work = counted.apply(pool).getConnection();
            this.sleeper = counted.apply(pool).getConnection();
            this.me = me;
            try (Statement s = sleeper.createStatement();
                    ResultSet rs = s.executeQuery("SELECT CONNECTION_ID()")) {
                rs.next();
                this.sleeperId = rs.getLong(1);
            }
        }

        void acquire() throws Exception {
            long seq = SEQ.incrementAndGet(); // arrival order (one process here; a database sequence across processes)
            try (PreparedStatement ps = work.prepareStatement("INSERT INTO " + TABLE + "_queue (worker, seq, sleeper)"
                    + " VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE seq = VALUES(seq), sleeper = VALUES(sleeper)")) {
                ps.setInt(1, me);
                ps.setLong(2, seq);
                ps.setLong(3, sleeperId);
                ps.executeUpdate();
            }
            // Free and first in the queue: take it (the release hands it on otherwise).
            try (PreparedStatement ps = work.prepareStatement("UPDATE " + TABLE + " SET owner = ?, token = token + 1,"
                    + " acquired_at = UTC_TIMESTAMP(6) WHERE name = 'row' AND owner = -1 AND NOT EXISTS (SELECT 1 FROM "
                    + TABLE + "_queue q WHERE q.seq < ? AND q.worker <> ?)")) {
                ps.setInt(1, me);
                ps.setLong(2, seq);
                ps.setInt(3, me);
                ps.executeUpdate(); // taken or not, the statement below tells
            }
            try (PreparedStatement ps = sleeper.prepareStatement(
                    "SELECT IF(owner = ?, 0, SLEEP(30)), owner, token FROM " + TABLE + " WHERE name = 'row'")) {
                ps.setInt(1, me);
                while (true) {
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        if (rs.getInt(2) == me) {
                            token = rs.getLong(3);
                            entry = seq;
                            break;
                        }
                        if (rs.getInt(1) == 0) {
                            throw new IllegalStateException("worker " + me + " not woken in 30 s");
                        }
                    } catch (SQLException interrupted) {
                        if (interrupted.getErrorCode() != 1317) { // Query execution was interrupted: woken
                            throw interrupted;
                        }
                    }
                }
            }
        }

        /** Deletes {@code worker}'s entry if it is still the one queued as {@code seq}. */
        private void deleteEntry(int worker, long seq) throws SQLException {
            try (PreparedStatement ps =
                    work.prepareStatement("DELETE FROM " + TABLE + "_queue WHERE worker = ? AND seq = ?")) {
                ps.setInt(1, worker);
                ps.setLong(2, seq);
                ps.executeUpdate();
            }
        }

        void release() throws Exception {
            long[] head = head(true);
            try (PreparedStatement ps = work.prepareStatement("UPDATE " + TABLE + " SET owner = ?, token = token + 1,"
                    + " acquired_at = UTC_TIMESTAMP(6) WHERE name = 'row' AND owner = ? AND token = ?")) {
                ps.setInt(1, head == null ? -1 : (int) head[0]);
                ps.setInt(2, me);
                ps.setLong(3, token);
                if (ps.executeUpdate() != 1) {
                    throw new IllegalStateException("worker " + me + " did not hold the row");
                }
            }
            if (head != null) {
                wake(head);
            }
            deleteEntry(me, entry); // it waits no more
            if (head
                    == null) { // a waiter that queued after the look above and found the row held: hand it the free row
                head = head(false);
                if (head != null) {
                    try (PreparedStatement ps =
                            work.prepareStatement("UPDATE " + TABLE + " SET owner = ?, token = token + 1,"
                                    + " acquired_at = UTC_TIMESTAMP(6) WHERE name = 'row' AND owner = -1")) {
                        ps.setInt(1, (int) head[0]);
                        if (ps.executeUpdate() == 1) {
                            wake(head);
                        }
                    }
                }
            }
        }

        /** The first entry (worker, sleeper, seq), but this worker's own if {@code notMine}; null if none. */
        private long[] head(boolean notMine) throws SQLException {
            try (PreparedStatement ps = work.prepareStatement("SELECT worker, sleeper, seq FROM " + TABLE + "_queue"
                    + " WHERE worker <> ? ORDER BY seq LIMIT 1")) {
                ps.setInt(1, notMine ? me : -1);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? new long[] {rs.getInt(1), rs.getLong(2), rs.getLong(3)} : null;
                }
            }
        }

        /** Interrupts the sleep of the worker just handed the row, then deletes its entry (off its path). */
        private void wake(long[] head) throws SQLException {
            try (Statement s = work.createStatement()) {
                s.execute("KILL QUERY " + head[1]);
            }
            deleteEntry((int) head[0], head[2]);
        }

        @Override
        public void close() throws Exception {
            try {
                work.close();
                sleeper.close();
            } finally {
                pool.close();
            }
        }
    }
}
