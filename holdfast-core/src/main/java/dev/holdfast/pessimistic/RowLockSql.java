package dev.holdfast.pessimistic;

import dev.holdfast.jdbc.dialect.Dialect;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * The {@code SELECT … FOR UPDATE} of one row with its wait bound, per dialect. Every bound covers
 * the whole statement, whatever it waits for (several share-lockers, a table lock), is applied by
 * the locking statement itself or in the same round trip before it, and leaves the connection's
 * settings as they were.
 */
abstract class RowLockSql {

    static RowLockSql forDialect(Dialect dialect) {
        return switch (dialect) {
            case H2 -> new H2();
            case POSTGRESQL -> new PostgreSql();
            case MARIADB -> new MariaDb();
        };
    }

    /** Locks the row; true if it exists and is now locked, false if missing (or skipped). */
    abstract boolean lock(Connection c, RowRef row, LockWait wait) throws SQLException;

    static String select(RowRef row) {
        return "SELECT 1 FROM " + row.table() + " WHERE " + row.keyColumn() + " = ? FOR UPDATE";
    }

    static boolean single(Connection c, String sql, Object key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setObject(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    static String seconds(LockWait wait) {
        return seconds(wait.bound().toMillis());
    }

    static String seconds(long millis) {
        return BigDecimal.valueOf(millis).divide(BigDecimal.valueOf(1000), 3, RoundingMode.UNNECESSARY).toPlainString();
    }

    /**
     * H2: {@code FOR UPDATE WAIT s} is per statement; {@code SET LOCK_TIMEOUT 0} would mean "default".
     * But H2 restarts the full {@code WAIT} each time the row passes to another holder while it
     * waits (measured: a 2 s bound ended after 3.1 s), so a bound is waited in slices of at most
     * {@value #H2_SLICE_MILLIS} ms until the deadline: a lock timeout at the end of a slice rolls
     * back only that statement, and each slice starts with a deadlock check.
     */
    static final class H2 extends RowLockSql {
        static final long H2_SLICE_MILLIS = 100;
        private static final int LOCK_TIMEOUT = 50200;

        @Override
        boolean lock(Connection c, RowRef row, LockWait wait) throws SQLException {
            return switch (wait.mode()) {
                case NO_WAIT -> single(c, select(row) + " NOWAIT", row.key());
                case SKIP_LOCKED -> single(c, select(row) + " SKIP LOCKED", row.key());
                case BOUNDED -> bounded(c, row, wait);
            };
        }

        private static boolean bounded(Connection c, RowRef row, LockWait wait) throws SQLException {
            long deadline = System.nanoTime() + wait.bound().toNanos();
            String select = select(row) + " WAIT ";
            long left = wait.bound().toMillis();
            while (true) {
                try {
                    return single(c, select + seconds(Math.min(left, H2_SLICE_MILLIS)), row.key());
                } catch (SQLException e) {
                    left = (deadline - System.nanoTime() + 999_999) / 1_000_000;
                    if (e.getErrorCode() != LOCK_TIMEOUT || left <= 0) {
                        throw e;
                    }
                }
            }
        }
    }

    /**
     * PostgreSQL has no per-statement lock bound, and {@code lock_timeout} bounds each lock wait
     * separately: {@code FOR UPDATE} waits for each share-locker of the row in turn (a foreign-key
     * insert of a child row share-locks its parent), and {@code NOWAIT} / {@code SKIP LOCKED} cover
     * the row but not the table lock taken first. So one round trip saves {@code lock_timeout} and
     * {@code statement_timeout} in transaction-local variables, sets them, locks, and restores
     * them. A bound sets both to the bound: {@code statement_timeout} covers the whole statement
     * (in the extended protocol its timer starts with the lock statement's own messages, with the
     * value set by the statement before). No-wait and skip-locked set {@code lock_timeout} to 1 ms,
     * so that a table lock fails them at once. On failure the transaction is rolled back, which
     * undoes the transaction-local settings too.
     */
    static final class PostgreSql extends RowLockSql {
        private static final String SAVE_AND_SET = "SELECT"
                + " set_config('holdfast.saved_lock_timeout', current_setting('lock_timeout'), true),"
                + " set_config('holdfast.saved_statement_timeout', current_setting('statement_timeout'), true),"
                + " set_config('lock_timeout', ?, true),"
                + " set_config('statement_timeout', coalesce(?, current_setting('statement_timeout')), true);";
        private static final String RESTORE = ";SELECT"
                + " set_config('lock_timeout', current_setting('holdfast.saved_lock_timeout'), true),"
                + " set_config('statement_timeout', current_setting('holdfast.saved_statement_timeout'), true)";

        @Override
        boolean lock(Connection c, RowRef row, LockWait wait) throws SQLException {
            // Target-list entries are evaluated in order: the old values are saved before they are replaced.
            String sql = SAVE_AND_SET + select(row) + switch (wait.mode()) {
                case NO_WAIT -> " NOWAIT";
                case SKIP_LOCKED -> " SKIP LOCKED";
                case BOUNDED -> "";
            } + RESTORE;
            boolean bounded = wait.mode() == LockWait.Mode.BOUNDED;
            String bound = wait.bound().toMillis() + "ms";
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setString(1, bounded ? bound : "1ms");
                ps.setString(2, bounded ? bound : null); // null: statement_timeout stays as it is
                ps.setObject(3, row.key());
                return lockResult(ps);
            }
        }

        /** The lock statement is the second of three; its row, if any, says whether the row was locked. */
        private static boolean lockResult(PreparedStatement ps) throws SQLException {
            boolean isResultSet = ps.execute();
            boolean found = false;
            for (int index = 0; ; index++) {
                if (isResultSet) {
                    try (ResultSet rs = ps.getResultSet()) {
                        boolean hasRow = rs.next();
                        if (index == 1) {
                            found = hasRow;
                        }
                    }
                } else if (ps.getUpdateCount() == -1) {
                    return found;
                }
                isResultSet = ps.getMoreResults();
            }
        }
    }

    /**
     * MariaDB: {@code SET STATEMENT … FOR} scopes the settings to the one statement.
     * {@code innodb_lock_wait_timeout} takes whole seconds only (a fraction is an error, and
     * {@code WAIT 0.5} silently becomes {@code NOWAIT}), so {@code max_statement_time} carries the
     * exact bound (it also ends a wait for a metadata lock, and each wait behind several
     * share-lockers) and the InnoDB and metadata-lock timeouts, rounded up, are backstops.
     * {@code SKIP LOCKED} does not cover a metadata lock ({@code LOCK TABLES … WRITE}, an
     * {@code ALTER TABLE}; {@code lock_wait_timeout} defaults to a day or a year), so no-wait and
     * skip-locked set {@code lock_wait_timeout=0}: fail at once.
     */
    static final class MariaDb extends RowLockSql {
        @Override
        boolean lock(Connection c, RowRef row, LockWait wait) throws SQLException {
            return switch (wait.mode()) {
                case NO_WAIT -> single(c, "SET STATEMENT lock_wait_timeout=0 FOR " + select(row) + " NOWAIT", row.key());
                case SKIP_LOCKED -> single(c, "SET STATEMENT lock_wait_timeout=0 FOR " + select(row) + " SKIP LOCKED", row.key());
                case BOUNDED -> {
                    long millis = wait.bound().toMillis();
                    long wholeSeconds = Math.max(1, (millis + 999) / 1000);
                    yield single(c, "SET STATEMENT max_statement_time=" + seconds(wait)
                            + ", innodb_lock_wait_timeout=" + wholeSeconds + ", lock_wait_timeout=" + wholeSeconds
                            + " FOR " + select(row), row.key());
                }
            };
        }
    }
}
