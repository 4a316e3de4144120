package dev.holdfast.testing;

import org.junit.jupiter.api.Test;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/** Runs a small test class through the JUnit engine with chosen settings and inspects the outcome. */
class DatabaseMatrixTest {

    static class Sample {
        @DatabaseTest
        void usesTheDatabase(TestDatabase db) throws Exception {
            String table = db.newTableName("matrix_probe");
            db.execute("CREATE TABLE " + table + " (id INT PRIMARY KEY)");
            db.execute("INSERT INTO " + table + " VALUES (1)");
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + table)).isEqualTo(1);
        }
    }

    private static final String NOWHERE = "jdbc:postgresql://127.0.0.1:1/test";

    private static EngineExecutionResults run(Map<String, String> settings) {
        return EngineTestKit.engine("junit-jupiter")
                .configurationParameters(settings)
                .selectors(selectClass(Sample.class))
                .execute();
    }

    @Test
    void runsOncePerDatabaseAndNamesTheDatabase() {
        EngineExecutionResults results = run(Map.of("CI", "true"));
        List<String> names = results.testEvents().succeeded().stream()
                .map(e -> e.getTestDescriptor().getDisplayName())
                .toList();
        assertThat(names)
                .containsExactlyInAnyOrder(
                        "[h2] usesTheDatabase", "[postgresql] usesTheDatabase", "[mariadb] usesTheDatabase");
        assertThat(results.testEvents().failed().count()).isZero();
    }

    @Test
    void anUnreachableDatabaseFailsOnCi() {
        EngineExecutionResults results =
                run(Map.of("CI", "true", "HOLDFAST_TEST_DATABASES", "postgresql", "HOLDFAST_POSTGRESQL_URL", NOWHERE));
        List<Event> failed = results.testEvents().failed().list();
        assertThat(failed).hasSize(1);
        Throwable cause = failed.get(0)
                .getPayload(org.junit.platform.engine.TestExecutionResult.class)
                .orElseThrow()
                .getThrowable()
                .orElseThrow();
        assertThat(cause)
                .hasMessageContaining("postgresql is unreachable at " + NOWHERE)
                .hasMessageContaining("CI=true");
        assertThat(results.testEvents().skipped().count()).isZero();
    }

    @Test
    void anUnreachableDatabaseIsSkippedLoudlyOffCi() {
        EngineExecutionResults results = run(
                Map.of("CI", "false", "HOLDFAST_TEST_DATABASES", "postgresql,h2", "HOLDFAST_POSTGRESQL_URL", NOWHERE));
        List<Event> skipped = results.testEvents().skipped().list();
        assertThat(skipped).hasSize(1);
        assertThat(skipped.get(0).getPayload(String.class).orElseThrow())
                .startsWith("SKIPPED: postgresql is unreachable");
        assertThat(results.testEvents().succeeded().count()).isEqualTo(1); // h2 still runs
    }

    @Test
    void thePgBouncerEntriesRunOnlyWhenListedAndNameTheirEntry() {
        // a pooler that is not running fails on CI like any server; the run itself is what is checked
        EngineExecutionResults results =
                run(Map.of("CI", "false", "HOLDFAST_TEST_DATABASES", "h2,pgbouncer,pgbouncer_session"));
        List<String> names = results.testEvents().list().stream()
                .filter(e -> e.getType() == org.junit.platform.testkit.engine.EventType.STARTED
                        || e.getType() == org.junit.platform.testkit.engine.EventType.SKIPPED)
                .map(e -> e.getTestDescriptor().getDisplayName())
                .distinct()
                .toList();
        assertThat(names)
                .containsExactlyInAnyOrder(
                        "[h2] usesTheDatabase", "[pgbouncer] usesTheDatabase", "[pgbouncer_session] usesTheDatabase");
        assertThat(results.testEvents().failed().count()).isZero();
    }

    @Test
    void anUnreachablePgBouncerFailsOnCiAndSaysHowToStartIt() {
        EngineExecutionResults results =
                run(Map.of("CI", "true", "HOLDFAST_TEST_DATABASES", "pgbouncer", "HOLDFAST_PGBOUNCER_URL", NOWHERE));
        List<Event> failed = results.testEvents().failed().list();
        assertThat(failed).hasSize(1);
        Throwable cause = failed.get(0)
                .getPayload(org.junit.platform.engine.TestExecutionResult.class)
                .orElseThrow()
                .getThrowable()
                .orElseThrow();
        assertThat(cause)
                .hasMessageContaining("pgbouncer is unreachable at " + NOWHERE)
                .hasMessageContaining("scripts/pgbouncer.sh up")
                .hasMessageContaining("CI=true");
        assertThat(results.testEvents().skipped().count()).isZero();
    }

    @Test
    void anUnknownEntryIsNamedWithTheKnownOnes() {
        EngineExecutionResults results = run(Map.of("CI", "true", "HOLDFAST_TEST_DATABASES", "h2,pgpool"));
        Throwable cause = results.containerEvents()
                .failed()
                .list()
                .get(0)
                .getPayload(org.junit.platform.engine.TestExecutionResult.class)
                .orElseThrow()
                .getThrowable()
                .orElseThrow();
        assertThat(cause).hasMessageContaining("no entry 'pgpool'").hasMessageContaining("pgbouncer_session");
    }
}
