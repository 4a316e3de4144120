package dev.holdfast.testing;

import org.junit.jupiter.api.Test;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;

import java.nio.file.Files;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/** {@link FaultTest} through the JUnit engine: where the fault servers are, and what happens when they are not. */
class FaultServersTest {

    static class Sample {
        @FaultTest
        void usesTheFaultServer(FaultDatabase db) throws Exception {
            String table = db.newTableName("fault_probe");
            db.execute("CREATE TABLE " + table + " (id INT PRIMARY KEY)");
            db.execute("INSERT INTO " + table + " VALUES (1)");
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + table)).isEqualTo(1);
            assertThat(db.port()).isNotIn(5432, 3306); // never the shared servers
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
    void runsOncePerFaultServerButNotOnH2() {
        EngineExecutionResults results = run(Map.of("CI", "true"));
        List<String> names = results.testEvents().succeeded().stream()
                .map(e -> e.getTestDescriptor().getDisplayName())
                .toList();
        assertThat(names).containsExactlyInAnyOrder("[postgresql] usesTheFaultServer", "[mariadb] usesTheFaultServer");
        assertThat(results.testEvents().failed().count()).isZero();
    }

    @Test
    void anUnreachableFaultServerFailsOnCi() {
        EngineExecutionResults results = run(Map.of(
                "CI", "true", "HOLDFAST_TEST_DATABASES", "postgresql", "HOLDFAST_FAULT_POSTGRESQL_URL", NOWHERE));
        List<Event> failed = results.testEvents().failed().list();
        assertThat(failed).hasSize(1);
        Throwable cause = failed.get(0)
                .getPayload(org.junit.platform.engine.TestExecutionResult.class)
                .orElseThrow()
                .getThrowable()
                .orElseThrow();
        assertThat(cause)
                .hasMessageContaining("postgresql fault server is unreachable at " + NOWHERE)
                .hasMessageContaining("CI=true")
                .hasMessageContaining("scripts/fault-servers.sh up");
        assertThat(results.testEvents().skipped().count()).isZero();
    }

    @Test
    void anUnreachableFaultServerIsSkippedLoudlyOffCi() {
        EngineExecutionResults results = run(Map.of(
                "CI",
                "false",
                "HOLDFAST_TEST_DATABASES",
                "postgresql,mariadb",
                "HOLDFAST_FAULT_POSTGRESQL_URL",
                NOWHERE));
        List<Event> skipped = results.testEvents().skipped().list();
        assertThat(skipped).hasSize(1);
        assertThat(skipped.get(0).getPayload(String.class).orElseThrow())
                .startsWith("SKIPPED: postgresql fault server is unreachable");
        assertThat(results.testEvents().succeeded().count()).isEqualTo(1); // mariadb still runs
    }

    @Test
    void findsTheScriptFromTheWorkingDirectory() {
        assertThat(FaultDatabase.script().toString()).endsWith("/scripts/fault-servers.sh");
        assertThat(Files.isExecutable(FaultDatabase.script())).isTrue();
    }
}
