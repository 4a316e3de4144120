package dev.holdfast.jdbc;

import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SchemaInstallerTest {

    @DatabaseTest
    void installingTheClockTwiceIsHarmless(TestDatabase db) {
        SchemaInstaller installer = new SchemaInstaller(db.dataSource());
        installer.installClock();
        installer.installClock();
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
