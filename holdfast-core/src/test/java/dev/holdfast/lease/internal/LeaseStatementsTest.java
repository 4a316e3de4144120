package dev.holdfast.lease;

import dev.holdfast.docs.Golden;
import dev.holdfast.jdbc.dialect.Dialect;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static dev.holdfast.docs.Golden.section;

/** Every lease statement, per database, as {@code statements/lease-<db>.sql} lists it ({@link LeaseJdbc} runs them). */
class LeaseStatementsTest {

    @ParameterizedTest
    @EnumSource(Dialect.class)
    void everyStatementIsRendered(Dialect dialect) {
        LeaseSql sql = LeaseSqls.forDialect(dialect, "holdfast_leases");
        String rendered = section("tryAcquire (exclusive)" + (sql.acquireReturnsFinalRow()
                        ? "; returns the final row: granted iff column 4 is the caller and column 5 true" : ""),
                sql.acquireSql(false))
                + section("tryLock (re-entrant)", sql.acquireSql(true))
                + optional("lock: an attempt that respects and joins the waiter queue", sql.acquireOrQueueSql())
                + optional("lock: an attempt that refuses while an earlier live waiter is queued; binds then "
                        + sql.queuedBinds("<name>", "<waiter>"), sql.acquireQueuedSql())
                + optional("lock: a refused attempt joins the queue or refreshes its entry", sql.joinQueueSql())
                + section("lock: a granted waiter leaves the queue", sql.leaveQueueSql())
                + section("lock: a waiter that gave up leaves the queue (binds " + sql.giveUpBinds("<name>", "<waiter>")
                        + ")", sql.giveUpSql())
                + section("renew" + (sql.renewReturnsExpiry() ? "" : "; then the row is read"), sql.renewSql())
                + section("release" + (sql.releaseReportsWaiters() ? "; returns the token and whether anyone may wait" : ""),
                        sql.releaseSql(true, false, false))
                + (sql.releaseSql(true, false, true).equals(sql.releaseSql(true, false, false)) ? ""
                        : section("fast release", sql.releaseSql(true, false, true)))
                + section("unlock (any grant of the owner), with a minimum hold", sql.releaseSql(false, true, false))
                + optional("after a release that reported waiters: hand the lease to the first waiter", sql.handOffSql())
                + optional("release where the service's last release of the name found waiters: the hand-off in the same"
                        + " round trip, only if the release matched", sql.withHandOffSql(sql.releaseSql(true, false, false)))
                + section("cohort hand-off: reserve a block of tokens, or renew before a hand-off (never shortening)"
                        + (sql.renewReturnsExpiry() ? "" : "; then the row is read"), sql.reserveSql())
                + (sql.renewReturnsExpiry() ? "" : section("cohort hand-off: the row after a reservation", sql.reservedSql()))
                + optional("batching: the exclusive acquire of many leases (here two), in name order; binds "
                        + (sql.bindsArrays() ? "three arrays: names, owners, ttl micros" : "name, owner, ttl micros of each"),
                        sql.acquireAllSql(2))
                + optional("batching: the release of many grants (here two), rows locked in name order; binds "
                        + (sql.bindsArrays() ? "three arrays: names, owners, tokens" : "the names, then name, owner, token of each")
                        + "; returns each released name and whether anyone may wait", sql.releaseAllSql(2, false))
                + section("find", sql.readSql())
                + section("diagnosing a refused release or renewal: the row and who broke it", sql.diagnoseSql())
                + section("list (operators)", sql.listLiveSql())
                + section("forceRelease (operators)", sql.forceReleaseSql());
        Golden.assertMatches("lease-" + dialect.id() + ".sql", rendered);
    }

    private static String optional(String title, String statement) {
        return statement == null ? "" : section(title, statement);
    }
}
