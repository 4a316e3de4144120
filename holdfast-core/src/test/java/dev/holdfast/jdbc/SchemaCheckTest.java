package dev.holdfast.jdbc;

import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link SchemaCheck} on every database: nothing to report for the installer's tables, every missing
 * table and satellite named with its script, and a dropped column named as an older schema.
 */
class SchemaCheckTest {

    @Test
    void everyDialectsScriptsGiveEveryTableItsColumns() {
        for (Dialect dialect : List.of(Dialect.H2, Dialect.POSTGRESQL, Dialect.MARIADB)) {
            Map<String, List<String>> leases =
                    SchemaCheck.columns(SchemaInstaller.script(dialect, HoldfastTable.LEASES, "l"));
            assertThat(leases).as("%s", dialect).containsKeys("l", "l_queue");
            assertThat(leases.get("l"))
                    .as("%s", dialect)
                    .contains("name", "owner", "token", "acquired_at", "expires_at", "broken_by", "broken_at")
                    .doesNotContain("primary", "key", "constraint");
            assertThat(leases.get("l_queue"))
                    .as("%s", dialect)
                    .contains("name", "owner", "wait_until")
                    .doesNotContain("primary", "key");
            assertThat(SchemaCheck.columns(SchemaInstaller.script(dialect, HoldfastTable.OFFLINE_LOCKS, "o"))
                            .get("o"))
                    .as("%s", dialect)
                    .containsExactly(
                            "lock_type",
                            "resource_id",
                            "lock_id",
                            "lock_owner",
                            "acquired_at",
                            "expires_at",
                            "ended_lock_id",
                            "ended_owner",
                            "ended_reason",
                            "ended_by",
                            "ended_at");
        }
    }

    @DatabaseTest
    void reportsMissingTablesAndColumnsAndNothingOnceInstalled(TestDatabase db) throws Exception {
        String locks = db.newTableName("hf_check_locks");
        String leases = db.newTableName("hf_check_leases");
        db.dropAfterTest(leases + "_queue");
        db.dropAfterTest(leases + "_timelines");
        Dialect dialect = Dialect.detect(db.dataSource());
        SchemaCheck check = new SchemaCheck(db.dataSource(), dialect);
        Map<HoldfastTable, String> tables = Map.of(HoldfastTable.OFFLINE_LOCKS, locks, HoldfastTable.LEASES, leases);

        List<SchemaCheck.Problem> missing = check.check(tables);
        assertThat(missing).extracting(SchemaCheck.Problem::relation).contains(locks, leases, leases + "_queue");
        assertThat(missing).allSatisfy(p -> assertThat(p.missingColumns()).isEmpty());
        assertThat(missing)
                .filteredOn(p -> p.relation().equals(locks))
                .singleElement()
                .satisfies(p -> assertThat(p.script())
                        .isEqualTo("dev/holdfast/schema/" + dialect.id() + "/V1_1__holdfast_locks.sql"));

        new SchemaInstaller(db.dataSource(), dialect).install(tables);
        assertThat(check.check(tables)).isEmpty();

        db.execute("ALTER TABLE " + leases + " DROP COLUMN broken_at");
        assertThat(check.check(tables)).singleElement().satisfies(p -> {
            assertThat(p.relation()).isEqualTo(leases);
            assertThat(p.missingColumns()).containsExactly("broken_at");
            assertThat(p.describe()).contains("lacks column broken_at");
        });
    }
}
