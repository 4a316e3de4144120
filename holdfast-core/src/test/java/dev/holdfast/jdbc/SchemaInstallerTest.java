package dev.holdfast.jdbc;

import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SchemaInstallerTest {

    @DatabaseTest
    void installingTheClockTwiceIsHarmless(TestDatabase db) {
        SchemaInstaller installer = new SchemaInstaller(db.dataSource());
        installer.installClock();
        installer.installClock();
    }

    @DatabaseTest
    void severalTablesInstallInOneGoAndABadNameCreatesNone(TestDatabase db) throws Exception {
        SchemaInstaller installer = new SchemaInstaller(db.dataSource());
        String locks = db.newTableName("hf_locks");
        String leases = db.newTableName("hf_leases");
        db.dropAfterTest(leases + "_queue");
        String never = db.newTableName("hf_never");
        assertThatThrownBy(() -> installer.install(
                        Map.of(HoldfastTable.OFFLINE_LOCKS, never, HoldfastTable.LEASES, "x; DROP TABLE users")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> db.queryLong("SELECT COUNT(*) FROM " + never))
                .as("nothing created")
                .isInstanceOf(java.sql.SQLException.class);

        installer.install(Map.of(HoldfastTable.OFFLINE_LOCKS, locks, HoldfastTable.LEASES, leases));
        installer.install(Map.of(HoldfastTable.OFFLINE_LOCKS, locks, HoldfastTable.LEASES, leases)); // idempotent
        assertThat(db.queryLong("SELECT COUNT(ended_lock_id) FROM " + locks)).isZero();
        assertThat(db.queryLong("SELECT COUNT(broken_by) FROM " + leases)).isZero();
        assertThat(db.queryLong("SELECT COUNT(*) FROM " + leases + "_queue")).isZero();
    }

    @Test
    void rejectsTableNamesThatAreNotPlainIdentifiersBeforeReadingAnything() {
        for (String bad : List.of("x; DROP TABLE users", "s.t", "a".repeat(49), "")) {
            assertThatThrownBy(() -> SchemaInstaller.script(Dialect.POSTGRESQL, HoldfastTable.LEASES, bad))
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    /**
     * What the installer runs is what Flyway finds in a dialect's folder: one script per table (and H2's
     * clock), no stray file a migration tool would also run.
     */
    @Test
    void eachDialectsFolderHoldsExactlyTheScriptsTheInstallerRuns() throws Exception {
        for (Dialect dialect : Dialect.values()) {
            List<String> found = filesIn("/dev/holdfast/schema/" + dialect.id());
            List<String> expected = new ArrayList<>();
            if (dialect == Dialect.H2) {
                expected.add(SchemaInstaller.CLOCK_SCRIPT);
            }
            for (HoldfastTable table : HoldfastTable.values()) {
                expected.addAll(table.scripts());
            }
            assertThat(found).as(dialect.id()).containsExactlyInAnyOrderElementsOf(expected);
        }
    }

    /** The names in a resource folder, whether the classes come from a folder or (another module's build) a jar. */
    private static List<String> filesIn(String folder) throws IOException, URISyntaxException {
        URI uri = Objects.requireNonNull(SchemaInstaller.class.getResource(folder), folder)
                .toURI();
        if (!"jar".equals(uri.getScheme())) {
            return list(Path.of(uri));
        }
        try (FileSystem jar = FileSystems.newFileSystem(uri, Map.of())) {
            return list(jar.provider().getPath(uri));
        }
    }

    private static List<String> list(Path folder) throws IOException {
        try (Stream<Path> files = Files.list(folder)) {
            return files.map(file -> file.getFileName().toString().replace("/", ""))
                    .toList();
        }
    }

    @Test
    void aTablesScriptNamesTheTableAndItsSatellitesAndNothingElse() {
        String ddl = SchemaInstaller.script(Dialect.POSTGRESQL, HoldfastTable.LEASES, "team_leases");
        assertThat(ddl)
                .doesNotContain("${")
                .contains("CREATE TABLE IF NOT EXISTS team_leases (")
                .contains("CREATE TABLE IF NOT EXISTS team_leases_queue (")
                .contains("CREATE TABLE IF NOT EXISTS team_leases_timelines (")
                .doesNotContain("holdfast_");
        assertThat(SchemaInstaller.script(Dialect.H2, HoldfastTable.OFFLINE_LOCKS, "locks"))
                .as("the clock is installed on its own")
                .doesNotContain("ALIAS");
    }

    @Test
    void splitsScriptsOnLineEndingSemicolonsAndSkipsComments() {
        assertThat(SchemaInstaller.split("-- comment\nCREATE TABLE a (x INT);\n\nCREATE INDEX i\n  ON a (x);\n"))
                .containsExactly("CREATE TABLE a (x INT)", "CREATE INDEX i\nON a (x)");
    }
}
