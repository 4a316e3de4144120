package dev.holdfast.lease.internal;

import dev.holdfast.docs.Golden;
import dev.holdfast.jdbc.dialect.Dialect;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.List;

import static dev.holdfast.docs.Golden.section;

/** Every lease statement, per database, as {@code statements/lease-<db>.sql} lists it ({@link LeaseStore} runs them). */
class LeaseStatementsTest {

    @ParameterizedTest
    @EnumSource(Dialect.class)
    void everyStatementIsRendered(Dialect dialect) {
        LeaseSql sql = LeaseStores.forDialect(dialect, "holdfast_leases").sql();
        PgLeaseSql notified = sql instanceof PgLeaseSql pg ? pg : null;
        PollingLeaseSql polling = sql instanceof PollingLeaseSql p ? p : null;
        BatchLeaseSql batches = sql instanceof BatchLeaseSql b ? b : null;
        String rendered = section(
                        "tryAcquire (exclusive)"
                                + (sql.acquireReturnsFinalRow()
                                        ? "; returns the final row: granted iff column 4 is the caller and column 5 true"
                                        : ""),
                        sql.acquireSql(false))
                + section("tryLock (re-entrant)", sql.acquireSql(true))
                + (notified == null
                        ? ""
                        : section(
                                "lock: an attempt that respects and joins the waiter queue",
                                notified.acquireOrQueueSql()))
                + (polling == null
                        ? ""
                        : section(
                                        "lock: an attempt that refuses while an earlier live waiter is queued;"
                                                + " binds then " + polling.queuedBinds("<name>", "<waiter>", 2_000_000),
                                        polling.acquireQueuedSql())
                                + section(
                                        "lock: a refused attempt joins the queue or refreshes its entry",
                                        polling.joinQueueSql()))
                + section("lock: a granted waiter leaves the queue", sql.leaveQueueSql())
                + section(
                        "lock: a waiter that gave up leaves the queue (binds "
                                + (notified == null
                                        ? List.of("<name>", "<waiter>")
                                        : notified.giveUpBinds("<name>", "<waiter>"))
                                + ")",
                        notified == null ? sql.leaveQueueSql() : notified.giveUpSql())
                + section("renew" + (sql.renewReturnsExpiry() ? "" : "; then the row is read"), sql.renewSql())
                + section(
                        "release"
                                + (notified != null
                                        ? "; returns the token and whether anyone may wait"
                                        : sql instanceof MariaDbLeaseSql
                                                ? "; matches only while the row's waiter mark is past, else the"
                                                        + " hand-off below runs"
                                                : ""),
                        sql.releaseSql(true, false, false))
                + (sql.releaseSql(true, false, true).equals(sql.releaseSql(true, false, false))
                        ? ""
                        : section("fast release", sql.releaseSql(true, false, true)))
                + section("unlock (any grant of the owner), with a minimum hold", sql.releaseSql(false, true, false))
                + (notified == null
                        ? ""
                        : section(
                                        "after a release that reported waiters: hand the lease to the first"
                                                + " waiter",
                                        notified.handOffSql())
                                + section(
                                        "release where the service's last release of the name found waiters: the hand-off in"
                                                + " the same round trip, only if the release matched",
                                        notified.withHandOffSql(sql.releaseSql(true, false, false))))
                + (!(sql instanceof MariaDbLeaseSql m)
                        ? ""
                        : section(
                                        "MariaDB: a release (without a minimum hold) reads the"
                                                + " first live waiter and whether its service is alive; binds name, owner, token",
                                        m.firstWaiterSql(true))
                                + section(
                                        "MariaDB: the same read by the wake-up connection right after a grant was handed to its"
                                                + " service, for that grant's release; binds name, token",
                                        m.nextWaiterSql())
                                + section(
                                        "MariaDB: then hands that waiter the lease if the caller still holds it and the waiter,"
                                                + " as read, is still the first live one and alive; binds lease owner, TTL, waiter, place, name,"
                                                + " owner, token, place, wake-up connection, lease owner, TTL",
                                        m.handToSql(true))
                                + section(
                                        "MariaDB: else the release (without a minimum hold) that"
                                                + " hands a freed lease to the first live waiter whose service is alive; binds name, owner, token",
                                        m.releaseHandingOffSql(true))
                                + section(
                                        "MariaDB: a waiter that gave up leaves the queue, then gives back a grant handed to it"
                                                + " (two statements; each binds name, waiter)",
                                        String.join(";\n", m.giveUpSqls()))
                                + section(
                                        "MariaDB: a release that handed the lease on wakes the waiter's wake-up connection (binds"
                                                + " its id)",
                                        MariaDbLeaseSql.WAKE)
                                + section(
                                        "MariaDB: a wake-up connection waits for its doorbell unless a lease is handed to one of"
                                                + " its waiters, other than those it has seen (here two; binds name, token of each, then seconds)",
                                        m.watchSql(2))
                                + section(
                                        "MariaDB: another connection of the service holds the doorbell (binds the wake-up"
                                                + " connection's id)",
                                        MariaDbLeaseSql.BELL_HOLD)
                                + section(
                                        "MariaDB: a queued waiter for a contended name reads whether it can only wait (binds"
                                                + " waiter, name, owner)",
                                        m.waitsOnSql())
                                + section(
                                        "MariaDB: what a wake-up connection reads when woken: the leases handed to its waiters",
                                        m.handedHereSql())
                                + section(
                                        "MariaDB: a wake-up connection says that its service is alive",
                                        MariaDbLeaseSql.LIVE_LOCK)
                                + section(
                                        "MariaDB: a wake-up connection or doorbell holder gives its locks back before it is"
                                                + " closed",
                                        MariaDbLeaseSql.RELEASE_LOCKS))
                + section(
                        "cohort hand-off: reserve a block of tokens, or renew before a hand-off (never shortening)"
                                + (sql.renewReturnsExpiry() ? "" : "; then the row is read"),
                        sql.reserveSql())
                + (sql.renewReturnsExpiry()
                        ? ""
                        : section("cohort hand-off: the row after a reservation", sql.reservedSql()))
                + (batches == null
                        ? ""
                        : section(
                                        "batching: the exclusive acquire of many leases (here two), in name"
                                                + " order; binds "
                                                + (batches.bindsArrays()
                                                        ? "three arrays: names, owners, ttl micros"
                                                        : "name, owner, ttl micros of each"),
                                        batches.acquireAllSql(2))
                                + section(
                                        "batching: the release of many grants (here two), rows locked in name order; binds "
                                                + (batches.bindsArrays()
                                                        ? "three arrays: names, owners, tokens"
                                                        : "the names, then name, owner, token of each")
                                                + "; returns each released name and whether anyone may wait",
                                        batches.releaseAllSql(2, false)))
                + section("find", sql.readSql())
                + section("diagnosing a refused release or renewal: the row and who broke it", sql.diagnoseSql())
                + section(
                        "lock: the bound ran out: who holds the lease, and how many live waiters queued ahead (binds "
                                + sql.timeoutBinds("<name>", "<waiter>") + ")",
                        sql.timeoutSql())
                + section("list (operators)", sql.listLiveSql())
                + section("LeaseView.live: a later page (operators)", sql.livePageSql(true))
                + section("LeaseView.waiters: all, the first page (operators)", sql.waitersSql(false, false))
                + section("LeaseView.waiters of one name, a later page (operators)", sql.waitersSql(true, true))
                + section("forceRelease (operators)", sql.forceReleaseSql());
        Golden.assertMatches("lease-" + dialect.id() + ".sql", rendered);
    }

    /** PostgreSQL with a failover grace: the grant statements that record the timeline and wait out the grace. */
    @org.junit.jupiter.api.Test
    void theGrantStatementsWithAFailoverGraceAreRendered() {
        PgLeaseSql sql = (PgLeaseSql) LeaseStores.forDialect(Dialect.POSTGRESQL, "holdfast_leases", 5_000_000, 0)
                .sql();
        String rendered = section("failoverGrace(5 s): tryAcquire (exclusive)", sql.acquireSql(false))
                + section("failoverGrace(5 s): tryLock (re-entrant)", sql.acquireSql(true))
                + section(
                        "failoverGrace(5 s): lock, an attempt that joins the queue (granted only after the grace)",
                        sql.acquireOrQueueSql())
                + section("failoverGrace(5 s): hand-off", sql.handOffSql())
                + section("failoverGrace(5 s): batching, the acquire of many leases", sql.acquireAllSql(2));
        Golden.assertMatches("lease-postgresql-failover-grace.sql", rendered);
    }
}
