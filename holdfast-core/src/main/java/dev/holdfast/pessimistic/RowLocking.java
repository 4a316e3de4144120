package dev.holdfast.pessimistic;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/** Runs the statements of {@link RowLockSql}: one, or for a bound longer than a slice, one per slice. */
final class RowLocking {

    private RowLocking() {}

    /** Locks the row; true if it exists and is now locked, false if missing (or skipped). */
    static boolean lock(Connection c, RowLockSql sql, RowRef row, LockWait wait) throws SQLException {
        long bound = wait.bound().toMillis();
        if (wait.mode() != LockWait.Mode.BOUNDED || bound <= sql.sliceMillis()) {
            return run(c, sql.lock(row, wait.mode(), bound));
        }
        long deadline = System.nanoTime() + wait.bound().toNanos();
        long left = bound;
        while (true) {
            try {
                return run(c, sql.lock(row, LockWait.Mode.BOUNDED, left));
            } catch (SQLException e) {
                left = (deadline - System.nanoTime() + 999_999) / 1_000_000;
                if (!sql.endedSlice(e) || left <= 0) {
                    throw e;
                }
            }
        }
    }

    /** Runs one statement; whether its row result has a row. Every result is read, so the round trip completes. */
    static boolean run(Connection c, RowLockSql.Statement statement) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(statement.sql())) {
            int index = 1;
            for (Object parameter : statement.parameters()) {
                if (parameter == null || parameter instanceof String) {
                    ps.setString(index++, (String) parameter);
                } else {
                    ps.setObject(index++, parameter);
                }
            }
            boolean isResultSet = ps.execute();
            boolean found = false;
            for (int result = 0; ; result++) {
                if (isResultSet) {
                    try (ResultSet rs = ps.getResultSet()) {
                        boolean hasRow = rs.next();
                        if (result == statement.rowResult()) {
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
