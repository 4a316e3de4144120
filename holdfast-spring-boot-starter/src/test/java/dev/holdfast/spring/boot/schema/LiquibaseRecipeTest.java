package dev.holdfast.spring.boot.schema;

import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Liquibase recipes of docs/schema.md, run as written on every database (Liquibase 4.x): Holdfast's
 * changelog alone in change log tables of its own, or included from the application's changelog.
 */
class LiquibaseRecipeTest {

    private static final String CHANGELOG = "dev/holdfast/schema/holdfast-changelog.xml";

    private static List<String> holdfastChangeSets(TestDatabase db) {
        return db.kind() == TestDatabase.Kind.H2
                ? List.of("1.0-holdfast-clock", "1.1-holdfast-locks", "1.2-holdfast-leases")
                : List.of("1.1-holdfast-locks", "1.2-holdfast-leases");
    }

    @DatabaseTest
    void propertiesRunHoldfastsChangelogInTablesOfItsOwn(TestDatabase db) throws Exception {
        try (PrivateSchema schema = PrivateSchema.create(db, "hf_liquibase")) {
            for (int start = 1; start <= 2; start++) { // the second start finds everything done
                Recipes.application(schema, LiquibaseAutoConfiguration.class)
                        .withPropertyValues(Recipes.properties("/recipes/liquibase.properties"))
                        .run(context -> assertThat(context).hasNotFailed());
            }
            assertThat(Recipes.column(
                            schema,
                            "SELECT id FROM holdfast_changelog WHERE filename = '" + CHANGELOG
                                    + "' ORDER BY orderexecuted"))
                    .isEqualTo(holdfastChangeSets(db));
            Recipes.assertHasTheInstallersTables(db, schema);
        }
    }

    @DatabaseTest
    void theApplicationsChangelogIncludesHoldfasts(TestDatabase db) throws Exception {
        try (PrivateSchema schema = PrivateSchema.create(db, "hf_liquibase")) {
            for (int start = 1; start <= 2; start++) {
                Recipes.application(schema, LiquibaseAutoConfiguration.class)
                        .withPropertyValues(
                                "spring.liquibase.change-log=classpath:recipes/app-changelog.xml",
                                "holdfast.jdbc.initialize-schema=never")
                        .run(context -> assertThat(context).hasNotFailed());
            }
            assertThat(Recipes.column(schema, "SELECT id FROM DATABASECHANGELOG ORDER BY orderexecuted"))
                    .as("the application's change set, then Holdfast's")
                    .isEqualTo(concat("1", holdfastChangeSets(db)));
            assertThat(Recipes.column(schema, "SELECT COUNT(*) FROM purchase_order"))
                    .containsExactly("0");
            Recipes.assertHasTheInstallersTables(db, schema);
        }
    }

    @DatabaseTest
    void parametersNameTheTables(TestDatabase db) throws Exception {
        try (PrivateSchema schema = PrivateSchema.create(db, "hf_liquibase")) {
            Recipes.application(schema, LiquibaseAutoConfiguration.class)
                    .withPropertyValues(Recipes.properties("/recipes/liquibase.properties"))
                    .withPropertyValues(
                            "spring.liquibase.parameters.holdfast_locks_table=team_locks",
                            "spring.liquibase.parameters.holdfast_leases_table=team_leases",
                            "holdfast.offline.table=team_locks",
                            "holdfast.lease.table=team_leases")
                    .run(context -> assertThat(context).hasNotFailed());
            assertThat(Recipes.column(schema, "SELECT COUNT(*) FROM team_leases_queue"))
                    .containsExactly("0");
            assertThat(Catalog.of(schema)).as("no table under a default name").isEmpty();
        }
    }

    private static List<String> concat(String first, List<String> rest) {
        return java.util.stream.Stream.concat(java.util.stream.Stream.of(first), rest.stream())
                .toList();
    }
}
