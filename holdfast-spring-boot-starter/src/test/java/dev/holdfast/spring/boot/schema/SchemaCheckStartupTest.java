package dev.holdfast.spring.boot.schema;

import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.spring.boot.HoldfastAutoConfiguration;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The start-up schema check on every database: missing tables or columns stop the start with a report
 * that names them and how to create them; tables that are there start; {@code holdfast.jdbc.schema-check=false}
 * starts without looking.
 */
@ExtendWith(OutputCaptureExtension.class)
class SchemaCheckStartupTest {

    private record Names(String locks, String leases) {
        String[] properties() {
            return new String[] {
                "holdfast.offline.table=" + locks,
                "holdfast.lease.table=" + leases,
                "holdfast.jdbc.initialize-schema=never"
            };
        }

        Map<HoldfastTable, String> tables() {
            return Map.of(HoldfastTable.OFFLINE_LOCKS, locks, HoldfastTable.LEASES, leases);
        }
    }

    private static Names names(TestDatabase db) {
        Names names = new Names(db.newTableName("hf_chk_locks"), db.newTableName("hf_chk_leases"));
        db.dropAfterTest(names.leases() + "_queue");
        db.dropAfterTest(names.leases() + "_timelines");
        return names;
    }

    private static ApplicationContextRunner runner(TestDatabase db) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        HoldfastAutoConfiguration.class, HoldfastSchemaCheckAutoConfiguration.class))
                .withBean(
                        DataSource.class,
                        () -> new DelegatingDataSource(db.dataSource())); // the shared pool stays open
    }

    private static FailureAnalysis analysis(Throwable startupFailure) {
        Throwable cause = startupFailure;
        while (!(cause instanceof HoldfastSchemaException)) {
            assertThat(cause).as("a HoldfastSchemaException in the causes").isNotNull();
            cause = cause.getCause();
        }
        return new HoldfastSchemaFailureAnalyzer().analyze(startupFailure);
    }

    @DatabaseTest
    void missingTablesStopTheStartNamingThemAndHowToCreateThem(TestDatabase db) {
        Names names = names(db);
        runner(db).withPropertyValues(names.properties()).run(context -> {
            assertThat(context).hasFailed();
            FailureAnalysis analysis = analysis(context.getStartupFailure());
            assertThat(analysis.getDescription())
                    .contains("table " + names.locks() + " is missing")
                    .contains("table " + names.leases() + " is missing")
                    .contains("table " + names.leases() + "_queue is missing")
                    .contains("dev/holdfast/schema/" + db.kind().id() + "/V1_2__holdfast_leases.sql");
            assertThat(analysis.getAction())
                    .contains("holdfast.jdbc.initialize-schema=always (now never)")
                    .contains("dev/holdfast/schema/" + db.kind().id() + "/V1_1__holdfast_locks.sql")
                    .contains("holdfast.jdbc.schema-check=false");
        });
    }

    @DatabaseTest
    void anOlderTableStopsTheStartNamingItsMissingColumn(TestDatabase db) throws Exception {
        Names names = names(db);
        new SchemaInstaller(db.dataSource()).install(names.tables());
        db.execute("ALTER TABLE " + names.leases() + " DROP COLUMN broken_by");

        runner(db).withPropertyValues(names.properties()).run(context -> {
            assertThat(context).hasFailed();
            FailureAnalysis analysis = analysis(context.getStartupFailure());
            assertThat(analysis.getDescription())
                    .contains("table " + names.leases() + " lacks column broken_by (an older Holdfast schema)")
                    .doesNotContain(names.locks());
        });
    }

    @DatabaseTest
    void tablesThatAreThereStart(TestDatabase db) throws Exception {
        Names names = names(db);
        new SchemaInstaller(db.dataSource()).install(names.tables());

        runner(db).withPropertyValues(names.properties()).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(HoldfastSchemaVerifier.class);
            assertThat(context.getBean(LeaseService.class).tryAcquire("job", "a", Duration.ofMinutes(1)))
                    .isPresent();
        });
        // created by the starter at this very start: the check runs after the initializer
        Names created = names(db);
        runner(db)
                .withPropertyValues(created.properties())
                .withPropertyValues("holdfast.jdbc.initialize-schema=always")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(HoldfastSchemaVerifier.class));
    }

    @DatabaseTest
    void theCheckTurnedOffStartsWithoutLooking(TestDatabase db) {
        Names names = names(db);
        runner(db)
                .withPropertyValues(names.properties())
                .withPropertyValues("holdfast.jdbc.schema-check=false")
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .doesNotHaveBean(HoldfastSchemaVerifier.class)
                        .hasSingleBean(LeaseService.class));
    }

    /** An application on a server database whose tables nobody created. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {}

    @Test
    void aRealStartPrintsTheReport(CapturedOutput output) {
        SpringApplication application = new SpringApplication(App.class);
        application.setDefaultProperties(Map.of(
                "spring.main.web-application-type",
                "none",
                "spring.flyway.enabled",
                "false",
                "spring.liquibase.enabled",
                "false"));

        assertThatThrownBy(() -> application
                .run(
                        "--spring.datasource.url=jdbc:h2:mem:check-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
                        "--holdfast.jdbc.initialize-schema=never")
                .close());

        assertThat(output)
                .contains("APPLICATION FAILED TO START")
                .contains("Holdfast's tables are missing or outdated")
                .contains("table holdfast_leases is missing")
                .contains("holdfast.jdbc.initialize-schema=always");
    }
}
