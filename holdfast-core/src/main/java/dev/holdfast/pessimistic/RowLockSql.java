package dev.holdfast.pessimistic;

import dev.holdfast.jdbc.dialect.Dialect;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * The {@code SELECT … FOR UPDATE} of one row with its wait bound, per dialect: text and binding order
 * only ({@link RowLocking} runs it). Every bound covers the whole statement, whatever it waits for
 * (several share-lockers, a table lock), is applied by the locking statement itself or in the same
 * round trip before it, and leaves the connection's settings as they were.
 */
abstract class RowLockSql {

    /**
     * One locking statement: its text, its parameters in binding order (strings bound as strings,
     * a null string as a null string), and which of its results is the row (0 for the only one).
     */
    record Statement(String sql, List<Object> parameters, int rowResult) {
        Statement {
            parameters = Collections.unmodifiableList(new ArrayList<>(parameters)); // may hold null
        }
    }

    static RowLockSql forDialect(Dialect dialect) {
        return switch (dialect) {
            case H2 -> new H2();
            case POSTGRESQL -> new PostgreSql();
            case MARIADB -> new MariaDb();
        };
    }

    /** The statement that locks {@code row} with {@code mode}, waiting at most {@code boundMillis} if bounded. */
    abstract Statement lock(RowRef row, LockWait.Mode mode, long boundMillis);

    /**
     * The longest wait one statement may carry: a longer bound is waited in statements of at most this
     * long, until the bound runs out; unlimited unless a dialect says otherwise.
     */
    long sliceMillis() {
        return Long.MAX_VALUE;
    }

    /** Whether {@code e} ended only one slice of a bounded wait (the next slice may start). */
    boolean endedSlice(SQLException e) {
        return false;
    }

    static String select(RowRef row) {
        return "SELECT 1 FROM " + row.table() + " WHERE " + row.keyColumn() + " = ? FOR UPDATE";
    }

    static String seconds(long millis) {
        return BigDecimal.valueOf(millis)
                .divide(BigDecimal.valueOf(1000), 3, RoundingMode.UNNECESSARY)
                .toPlainString();
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
        Statement lock(RowRef row, LockWait.Mode mode, long boundMillis) {
            String sql = select(row)
                    + switch (mode) {
                        case NO_WAIT -> " NOWAIT";
                        case SKIP_LOCKED -> " SKIP LOCKED";
                        case BOUNDED -> " WAIT " + seconds(Math.min(boundMillis, H2_SLICE_MILLIS));
                    };
            return new Statement(sql, List.of(row.key()), 0);
        }

        @Override
        long sliceMillis() {
            return H2_SLICE_MILLIS;
        }

        @Override
        boolean endedSlice(SQLException e) {
            return e.getErrorCode() == LOCK_TIMEOUT;
        }
    }

    /**
     * PostgreSQL has no per-statement lock bound, and {@code lock_timeout} bounds each lock wait
     * separately: {@code FOR UPDATE} waits for each share-locker of the row in turn (a foreign-key
     * insert of a child row share-locks its parent), and {@code NOWAIT} / {@code SKIP LOCKED} cover
     * the row but not the table lock taken first. So one round trip saves {@code lock_timeout} and
     * {@code statement_timeout} in transaction-local variables, sets them, locks, and restores
     * them: three statements, the lock the second. A bound sets both to the bound:
     * {@code statement_timeout} covers the whole statement (in the extended protocol its timer starts
     * with the lock statement's own messages, with the value set by the statement before). No-wait
     * and skip-locked set {@code lock_timeout} to 1 ms, so that a table lock fails them at once, and
     * leave {@code statement_timeout} as it is (a null parameter). On failure the transaction is
     * rolled back, which undoes the transaction-local settings too.
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
        Statement lock(RowRef row, LockWait.Mode mode, long boundMillis) {
            // Target-list entries are evaluated in order: the old values are saved before they are replaced.
            String sql = SAVE_AND_SET
                    + select(row)
                    + switch (mode) {
                        case NO_WAIT -> " NOWAIT";
                        case SKIP_LOCKED -> " SKIP LOCKED";
                        case BOUNDED -> "";
                    }
                    + RESTORE;
            boolean bounded = mode == LockWait.Mode.BOUNDED;
            String bound = boundMillis + "ms";
            return new Statement(sql, Arrays.asList(bounded ? bound : "1ms", bounded ? bound : null, row.key()), 1);
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
        Statement lock(RowRef row, LockWait.Mode mode, long boundMillis) {
            long wholeSeconds = Math.max(1, (boundMillis + 999) / 1000);
            String sql = switch (mode) {
                case NO_WAIT -> "SET STATEMENT lock_wait_timeout=0 FOR " + select(row) + " NOWAIT";
                case SKIP_LOCKED -> "SET STATEMENT lock_wait_timeout=0 FOR " + select(row) + " SKIP LOCKED";
                case BOUNDED ->
                    "SET STATEMENT max_statement_time=" + seconds(boundMillis)
                            + ", innodb_lock_wait_timeout=" + wholeSeconds + ", lock_wait_timeout=" + wholeSeconds
                            + " FOR " + select(row);
            };
            return new Statement(sql, List.of(row.key()), 0);
        }
    }
}
