package dev.holdfast.pessimistic;

import dev.holdfast.docs.Golden;
import dev.holdfast.jdbc.dialect.Dialect;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static dev.holdfast.docs.Golden.section;

/**
 * Every row-lock statement, per database, as {@code statements/row-lock-<db>.sql} lists it, and the
 * query that names the blockers of a wait ({@code statements/row-lock-blockers-<db>.sql}).
 */
class RowLockStatementsTest {

    @ParameterizedTest
    @EnumSource(Dialect.class)
    void everyStatementIsRendered(Dialect dialect) {
        RowLockSql sql = RowLockSql.forDialect(dialect);
        RowRef row = RowRef.of("purchase_order", "order_number", "A-1");
        String rendered = render("forUpdate, no wait", sql.lock(row, LockWait.Mode.NO_WAIT, 0))
                + render("forUpdate, skip locked", sql.lock(row, LockWait.Mode.SKIP_LOCKED, 0))
                + render("forUpdate, at most 1.5 s", sql.lock(row, LockWait.Mode.BOUNDED, 1500))
                + render("forUpdate, at most 0.25 s", sql.lock(row, LockWait.Mode.BOUNDED, 250))
                + (sql.sliceMillis() == Long.MAX_VALUE
                        ? ""
                        : "-- a longer bound is waited in statements of at most " + sql.sliceMillis() + " ms\n\n");
        Golden.assertMatches("row-lock-" + dialect.id() + ".sql", rendered);
    }

    @ParameterizedTest
    @EnumSource(Dialect.class)
    void theBlockerQueryIsRendered(Dialect dialect) {
        BlockerSql sql = BlockerSql.forDialect(dialect);
        Golden.assertMatches(
                "row-lock-blockers-" + dialect.id() + ".sql",
                section(
                                "who blocks session ?"
                                        + " (read on another connection while it waits; again after "
                                        + sql.rereadMillis()
                                        + " ms while it is not seen waiting)",
                                sql.sql())
                        + section(
                                "the sessions waiting for a lock now, longest first; binds the limit (RowLockWaits, then"
                                        + " the query above for each)",
                                sql.waitingSql()));
    }

    private static String render(String title, RowLockSql.Statement statement) {
        return section(
                title + "; binds " + statement.parameters()
                        + (statement.rowResult() == 0 ? "" : "; the row is result " + statement.rowResult()),
                statement.sql());
    }
}
