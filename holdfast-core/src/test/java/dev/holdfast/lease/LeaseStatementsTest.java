package dev.holdfast.lease;

import dev.holdfast.docs.Golden;
import dev.holdfast.jdbc.dialect.Dialect;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static dev.holdfast.docs.Golden.section;

/**
 * The lease statements that are text alone, per database, as {@code statements/lease-<db>.sql} lists
 * them (PostgreSQL's queued acquire and its release with a wake-up are built and run inside
 * {@link LeaseSql.PostgreSql}).
 */
class LeaseStatementsTest {

    @ParameterizedTest
    @EnumSource(Dialect.class)
    void everyTextStatementIsRendered(Dialect dialect) {
        LeaseSql sql = LeaseSql.forDialect(dialect, "holdfast_leases");
        String rendered = section("tryAcquire (exclusive)", sql.acquireSql(false))
                + section("tryLock (re-entrant)", sql.acquireSql(true))
                + section("renew", sql.renewSql())
                + section("the expiry a release sets", sql.releasedExpiry(null))
                + section("the expiry a release with a minimum hold sets", sql.releasedExpiry(1_000_000L));
        Golden.assertMatches("lease-" + dialect.id() + ".sql", rendered);
    }
}
