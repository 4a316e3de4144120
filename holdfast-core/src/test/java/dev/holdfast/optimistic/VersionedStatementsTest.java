package dev.holdfast.optimistic;

import dev.holdfast.docs.Golden;
import dev.holdfast.jdbc.SqlIdentifier;
import dev.holdfast.jdbc.dialect.Dialect;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static dev.holdfast.docs.Golden.section;

/** Every statement of a versioned table, per database, as {@code statements/versioned-table-<db>.sql} lists it. */
class VersionedStatementsTest {

    @ParameterizedTest
    @EnumSource(Dialect.class)
    void everyStatementIsRendered(Dialect dialect) {
        VersionedSql sql = new VersionedSql(
                dialect,
                SqlIdentifier.of("purchase_order"),
                SqlIdentifier.unqualified("order_no"),
                SqlIdentifier.unqualified("version"),
                SqlIdentifier.unqualified("modified_by"),
                SqlIdentifier.unqualified("modified"));
        String rendered = section(
                        "update of two columns",
                        sql.update(Assignments.of("street", "x").and("city", "y")))
                + section("update of the version alone (a root bump)", sql.update(Assignments.none()))
                + section("delete", sql.delete())
                + section("read", sql.read())
                + section("explain a refusal", sql.explain())
                + section("verifyUnchanged (read-set check, shared lock)", sql.verify());
        Golden.assertMatches("versioned-table-" + dialect.id() + ".sql", rendered);
    }
}
