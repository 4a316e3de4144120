package dev.holdfast.pessimistic;

import dev.holdfast.jdbc.dialect.Dialect;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * The {@code SELECT … FOR UPDATE} of one row with its wait bound, per dialect. Every bound is
 * applied by the locking statement itself or in the same round trip before it, and leaves the
 * connection's settings as they were (measured facts: shared/reference/database-facts.md §1).
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
        return BigDecimal.valueOf(wait.bound().toMillis()).divide(BigDecimal.valueOf(1000), 3, RoundingMode.UNNECESSARY)
                .toPlainString();
    }

    /** H2: {@code FOR UPDATE WAIT s} is per statement; {@code SET LOCK_TIMEOUT 0} would mean "default". */
    static final class H2 extends RowLockSql {
        @Override
        boolean lock(Connection c, RowRef row, LockWait wait) throws SQLException {
            String suffix = switch (wait.mode()) {
                case BOUNDED -> " WAIT " + seconds(wait);
                case NO_WAIT -> " NOWAIT";
                case SKIP_LOCKED -> " SKIP LOCKED";
            };
            return single(c, select(row) + suffix, row.key());
        }
    }

    /**
     * PostgreSQL has no per-statement lock bound, so one round trip saves {@code lock_timeout} in a
     * transaction-local variable, sets it, locks, and restores it. On failure the transaction is
     * rolled back, which undoes the transaction-local settings too.
     */
    static final class PostgreSql extends RowLockSql {
        @Override
        boolean lock(Connection c, RowRef row, LockWait wait) throws SQLException {
            return switch (wait.mode()) {
                case NO_WAIT -> single(c, select(row) + " NOWAIT", row.key());
                case SKIP_LOCKED -> single(c, select(row) + " SKIP LOCKED", row.key());
                case BOUNDED -> bounded(c, row, wait);
            };
        }

        private boolean bounded(Connection c, RowRef row, LockWait wait) throws SQLException {
            // Target-list entries are evaluated in order: the old value is saved before it is replaced.
            String sql = "SELECT set_config('holdfast.saved_lock_timeout', current_setting('lock_timeout'), true),"
                    + " set_config('lock_timeout', ?, true);"
                    + select(row) + ";"
                    + "SELECT set_config('lock_timeout', current_setting('holdfast.saved_lock_timeout'), true)";
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setString(1, wait.bound().toMillis() + "ms");
                ps.setObject(2, row.key());
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
    }

    /**
     * MariaDB: {@code SET STATEMENT … FOR} scopes both settings to the one statement.
     * {@code innodb_lock_wait_timeout} takes whole seconds only (a fraction is an error, and
     * {@code WAIT 0.5} silently becomes {@code NOWAIT}), so {@code max_statement_time} carries the
     * exact bound and the InnoDB timeout, rounded up, is a backstop.
     */
    static final class MariaDb extends RowLockSql {
        @Override
        boolean lock(Connection c, RowRef row, LockWait wait) throws SQLException {
            return switch (wait.mode()) {
                case NO_WAIT -> single(c, select(row) + " NOWAIT", row.key());
                case SKIP_LOCKED -> single(c, select(row) + " SKIP LOCKED", row.key());
                case BOUNDED -> {
                    long millis = wait.bound().toMillis();
                    long wholeSeconds = Math.max(1, (millis + 999) / 1000);
                    yield single(c, "SET STATEMENT max_statement_time=" + seconds(wait)
                            + ", innodb_lock_wait_timeout=" + wholeSeconds + " FOR " + select(row), row.key());
                }
            };
        }
    }
}
