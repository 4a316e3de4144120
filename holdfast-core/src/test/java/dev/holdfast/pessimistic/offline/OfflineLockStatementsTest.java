package dev.holdfast.pessimistic.offline;

import dev.holdfast.docs.Golden;
import dev.holdfast.jdbc.dialect.Dialect;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static dev.holdfast.docs.Golden.section;

/** Every statement of the offline lock manager, per database, as {@code statements/offline-lock-<db>.sql} lists it. */
class OfflineLockStatementsTest {

    @ParameterizedTest
    @EnumSource(Dialect.class)
    void everyStatementIsRendered(Dialect dialect) {
        OfflineLockSql sql = OfflineLockSql.forDialect(dialect, "holdfast_locks");
        String rendered = section("tryLock, relaxed commit", sql.tryLock(true))
                + section("tryLock, durable commit", sql.tryLock(false))
                + section("reacquire: a new id for the owner's live lock, relaxed", sql.replaceOwn(true))
                + section("reacquire, durable", sql.replaceOwn(false))
                + section("checkLock", sql.check())
                + section("checkLock: how an id that no row holds ended", sql.ended())
                + section("releaseLock, relaxed", sql.release(false, true))
                + section("releaseLock with owner, durable", sql.release(true, false))
                + section("extendLockExpiration", sql.extend(false))
                + section("extendLockExpiration with owner", sql.extend(true))
                + section("holder (operators)", sql.holder())
                + section("heldLocks by type and owner (operators)", sql.held(true, true))
                + section("heldLocks, all (operators)", sql.held(false, false))
                + section(
                        "heldLocksAfter by type and owner, a later page (operators)",
                        sql.heldByResource(true, true, true))
                + section("heldLocksAfter, all, the first page (operators)", sql.heldByResource(false, false, false))
                + section("forceRelease (operators)", sql.forceRelease())
                + section("purgeExpired (operators)", sql.purgeSql());
        Golden.assertMatches("offline-lock-" + dialect.id() + ".sql", rendered);
    }
}
