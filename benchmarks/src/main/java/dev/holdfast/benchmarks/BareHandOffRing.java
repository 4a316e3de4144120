package dev.holdfast.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * The ceiling of a fair hand-off across MariaDB instances ({@code bareRing@mariadb} in {@link LeaseHandoff}):
 * what any design reaches that commits each grant durably in the releaser's statement and wakes the next
 * instance through the database. A measuring stick, not a lock: the workers pass one row round a fixed
 * ring (worker {@code i} always hands to {@code i + 1}), so there is no queue to join or leave, no
 * liveness check and no bell that wakes the wrong instance.
 *
 * <p>Each worker has two connections of its own pool: one for the hand-off, one for its bell. Worker
 * {@code i}'s bell connection holds user-level lock {@code ring_(i + 1)}, on which worker {@code i + 1}
 * sleeps. A release is one auto-commit update (owner to the next worker, token + 1, database time)
 * and one {@code RELEASE_LOCK}; the woken worker reads the row in the statement that slept, and gives
 * the lock back in it, for its predecessor to take again before it next sleeps.
 */
final class BareHandOffRing {

    static final String TABLE = "holdfast_bench_bare_ring";

    private BareHandOffRing() {}

    /** The ring's {@code workers} workers on {@code kind}, each from its own pool (wrapped by {@code counted}). */
    static List<Worker> workers(
            TestDatabase.Kind kind,
            HikariDataSource admin,
            int workers,
            java.util.function.UnaryOperator<javax.sql.DataSource> counted)
            throws SQLException {
        // Measured with 4 and 8. With 2, 3 and 16 workers MariaDB refused the ring's waits as deadlocks
        // (its metadata-lock deadlock search reports one when it goes deeper than 32).
        if (workers < 4 || workers > 8) {
            throw new IllegalArgumentException("the ring runs with 4 to 8 workers, not " + workers);
        }
        LeasePeers.execute(
                admin,
                "DROP TABLE IF EXISTS " + TABLE,
                "CREATE TABLE " + TABLE + " (name VARCHAR(64) PRIMARY KEY,"
                        + " owner INT NOT NULL, token BIGINT NOT NULL, acquired_at DATETIME(6) NOT NULL, expires_at DATETIME(6) NOT NULL)"
                        + " ENGINE=InnoDB",
                "INSERT INTO " + TABLE + " VALUES ('ring', 0, 1, UTC_TIMESTAMP(6),"
                        + " UTC_TIMESTAMP(6) + INTERVAL 30 SECOND)");
        List<Worker> ring = new ArrayList<>();
        for (int i = 0; i < workers; i++) {
            ring.add(new Worker(kind.newPool("bench-ring-" + i, 2), counted, i, workers));
        }
        return ring;
    }

    private static String lock(int worker) {
        return "holdfast_bench_ring_" + worker;
    }

    /** One instance of the ring: acquire (wait for the row), release (hand it to the next), close. */
    static final class Worker implements AutoCloseable {
        private final HikariDataSource pool;
        private final Connection work;
        private final Connection bell;
        private final int me;
        private final int next;
        private boolean first;
        private boolean holdsSuccessorsLock;
        long token;

        Worker(
                HikariDataSource pool,
                java.util.function.UnaryOperator<javax.sql.DataSource> counted,
                int me,
                int workers)
                throws SQLException {
            this.pool = pool;
            this.work = counted.apply(pool).getConnection();
            this.bell = counted.apply(pool).getConnection();
            this.me = me;
            this.next = (me + 1) % workers;
            this.first = me == 0; // worker 0 holds the row at the start, with token 1
            this.token = 1;
            takeSuccessorsLock();
        }

        private void takeSuccessorsLock() throws SQLException {
            try (PreparedStatement ps = bell.prepareStatement("SELECT GET_LOCK(?, 5)")) {
                ps.setString(1, lock(next));
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    if (rs.getInt(1) != 1) {
                        throw new IllegalStateException("worker " + me + " could not take " + lock(next));
                    }
                }
            }
            holdsSuccessorsLock = true;
        }

        void acquire() throws Exception {
            if (!holdsSuccessorsLock) {
                takeSuccessorsLock(); // the successor gave it back when it woke
            }
            if (first) {
                first = false;
                return;
            }
            try (PreparedStatement ps = bell.prepareStatement("SELECT g.got, l.owner, l.token, RELEASE_LOCK(?)"
                    + " FROM (SELECT GET_LOCK(?, 30) AS got) g LEFT JOIN " + TABLE
                    + " l ON l.name = 'ring' AND g.got = 1")) {
                ps.setString(1, lock(me));
                ps.setString(2, lock(me));
                while (true) {
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        if (rs.getInt(1) != 1) {
                            throw new IllegalStateException("worker " + me + " not woken in 30 s");
                        }
                        if (rs.getInt(2) == me) {
                            token = rs.getLong(3);
                            return;
                        }
                    }
                    // Took the lock before the predecessor took it back (it is given back above): sleep again.
                    java.util.concurrent.locks.LockSupport.parkNanos(50_000);
                }
            }
        }

        void release() throws Exception {
            try (PreparedStatement ps = work.prepareStatement("UPDATE " + TABLE + " SET owner = ?, token = token + 1,"
                    + " acquired_at = UTC_TIMESTAMP(6), expires_at = UTC_TIMESTAMP(6) + INTERVAL 30 SECOND"
                    + " WHERE name = 'ring' AND owner = ? AND token = ?")) {
                ps.setInt(1, next);
                ps.setInt(2, me);
                ps.setLong(3, token);
                if (ps.executeUpdate() != 1) {
                    throw new IllegalStateException("worker " + me + " did not hold the row");
                }
            }
            try (PreparedStatement ps = bell.prepareStatement("SELECT RELEASE_LOCK(?)")) {
                ps.setString(1, lock(next));
                ps.executeQuery().close();
            }
            holdsSuccessorsLock = false;
        }

        @Override
        public void close() throws Exception {
            try (PreparedStatement ps = bell.prepareStatement("SELECT RELEASE_ALL_LOCKS()")) {
                ps.executeQuery().close();
            } finally {
                work.close();
                bell.close();
                pool.close();
            }
        }
    }
}
