package dev.holdfast.spring.boot.schema;

import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Flyway recipes of docs/schema.md, run as written on every database: Holdfast's scripts in the
 * history table {@code flyway_holdfast_history}, apart from the application's own versions.
 */
class FlywayRecipeTest {

    private static List<String> holdfastVersions(TestDatabase db) {
        return db.kind() == TestDatabase.Kind.H2 ? List.of("0", "1.0", "1.1", "1.2") : List.of("0", "1.1", "1.2");
    }

    @DatabaseTest
    void javaMigratesIntoAHistoryOfItsOwnBesideTheApplicationsTables(TestDatabase db) throws Exception {
        try (PrivateSchema schema = PrivateSchema.create(db, "hf_flyway")) {
            Recipes.execute(schema, "CREATE TABLE purchase_order (order_no VARCHAR(20) NOT NULL PRIMARY KEY)");

            HoldfastFlywayConfiguration.migrateHoldfast(schema.dataSource());
            HoldfastFlywayConfiguration.migrateHoldfast(schema.dataSource()); // the next start: nothing to do

            assertThat(Recipes.flywayVersions(schema, "flyway_holdfast_history"))
                    .as("baseline, then Holdfast's")
                    .isEqualTo(holdfastVersions(db));
            Recipes.assertHasTheInstallersTables(db, schema);
        }
    }

    @DatabaseTest
    void propertiesMigrateAnApplicationWithoutFlywayOfItsOwn(TestDatabase db) throws Exception {
        try (PrivateSchema schema = PrivateSchema.create(db, "hf_flyway")) {
            for (int start = 1; start <= 2; start++) { // the second start finds everything done
                Recipes.application(schema, FlywayAutoConfiguration.class)
                        .withPropertyValues(Recipes.properties("/recipes/flyway.properties"))
                        .run(context -> assertThat(context).hasNotFailed());
            }
            assertThat(Recipes.flywayVersions(schema, "flyway_holdfast_history"))
                    .isEqualTo(
                            db.kind() == TestDatabase.Kind.H2 ? List.of("1.0", "1.1", "1.2") : List.of("1.1", "1.2"));
            Recipes.assertHasTheInstallersTables(db, schema);
        }
    }

    /** The application's migrations take Holdfast's versions 1.1 and 1.2 too: neither history sees the other's. */
    @DatabaseTest
    void aMigrationStrategyRunsHoldfastsAfterTheApplicationsOwnFlyway(TestDatabase db) throws Exception {
        try (PrivateSchema schema = PrivateSchema.create(db, "hf_flyway")) {
            for (int start = 1; start <= 2; start++) {
                Recipes.application(schema, FlywayAutoConfiguration.class)
                        .withUserConfiguration(HoldfastFlywayConfiguration.class)
                        .withPropertyValues(
                                "spring.flyway.locations=classpath:recipes/app-migrations",
                                "holdfast.jdbc.initialize-schema=never")
                        .run(context -> assertThat(context).hasNotFailed());
            }
            assertThat(Recipes.flywayVersions(schema, "flyway_schema_history")).containsExactly("1.1", "1.2");
            assertThat(Recipes.flywayVersions(schema, "flyway_holdfast_history"))
                    .isEqualTo(holdfastVersions(db));
            assertThat(Recipes.column(schema, "SELECT COUNT(*) FROM order_line"))
                    .containsExactly("0");
            Recipes.assertHasTheInstallersTables(db, schema);
        }
    }
}
