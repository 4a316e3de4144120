package dev.holdfast.jdbc;

import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

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
        assertThatThrownBy(() -> installer.install(Map.of(HoldfastTable.OFFLINE_LOCKS, never,
                HoldfastTable.LEASES, "x; DROP TABLE users"))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> db.queryLong("SELECT COUNT(*) FROM " + never)).as("nothing created")
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

    @Test
    void splitsScriptsOnLineEndingSemicolonsAndSkipsComments() {
        assertThat(SchemaInstaller.split("-- comment\nCREATE TABLE a (x INT);\n\nCREATE INDEX i\n  ON a (x);\n"))
                .containsExactly("CREATE TABLE a (x INT)", "CREATE INDEX i\nON a (x)");
    }
}
