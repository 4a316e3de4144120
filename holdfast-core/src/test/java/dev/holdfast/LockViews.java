package dev.holdfast;

import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.Callable;

/**
 * Reads of a database's lock views (who waits for a lock, who holds it) that see the present. On
 * PostgreSQL and H2 a read is just run. MariaDB's {@code INFORMATION_SCHEMA.INNODB_TRX} and
 * {@code INNODB_LOCK_WAITS} come from a cache that InnoDB refreshes only when nobody has read it for
 * 0.1 s: tests polling it in several JVMs at once, each only every 150 ms, kept it frozen, and a lock
 * wait that began after its last refresh never showed (CI: two tests waited 20 and 30 s for one).
 * So every test read of those views goes through {@link #read}: on MariaDB one at a time across all
 * JVMs (a user lock), each after 0.12 s in which no other read through here took place.
 */
public final class LockViews {

    private static final String LOCK = "holdfast_test_innodb_views";
    /** Longer than InnoDB's {@code CACHE_MIN_IDLE_TIME} of 0.1 s. */
    private static final long QUIET_MILLIS = 120;

    private static final int LOCK_WAIT_SECONDS = 60;

    private LockViews() {}

    /** Runs {@code read}, which reads {@code db}'s lock views, when the views will show the present. */
    public static <T> T read(TestDatabase db, Callable<T> read) throws Exception {
        if (db.kind() != TestDatabase.Kind.MARIADB) {
            return read.call(); // their views are read live
        }
        try (Connection turn = db.connection()) {
            if (call(turn, "SELECT GET_LOCK(?, " + LOCK_WAIT_SECONDS + ")") != 1) {
                throw new IllegalStateException("no turn to read INNODB_TRX within " + LOCK_WAIT_SECONDS + " s");
            }
            try {
                Thread.sleep(QUIET_MILLIS); // the last read through here ended before our turn began
                return read.call();
            } finally {
                call(turn, "SELECT RELEASE_LOCK(?)"); // the pooled connection keeps no lock
            }
        }
    }

    private static long call(Connection c, String sql) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, LOCK);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
