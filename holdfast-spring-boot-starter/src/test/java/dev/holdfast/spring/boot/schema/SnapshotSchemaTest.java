package dev.holdfast.spring.boot.schema;

import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.flywaydb.core.Flyway;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The one script per table of the first release creates exactly what the chain of the snapshots
 * ({@code V1_0}…{@code V1_10}, kept in the test resources {@code snapshot-schema/}) left: the same
 * tables, columns, types, defaults, indexes and constraints, under the same names.
 */
class SnapshotSchemaTest {

    @DatabaseTest
    void theReleaseScriptsCreateWhatTheSnapshotChainLeft(TestDatabase db) throws Exception {
        try (PrivateSchema chain = PrivateSchema.create(db, "hf_chain");
             PrivateSchema release = PrivateSchema.create(db, "hf_release")) {
            Flyway.configure().dataSource(chain.dataSource())
                    .locations("classpath:snapshot-schema/" + db.kind().id())
                    .placeholders(Map.of("holdfast_locks_table", "holdfast_locks",
                            "holdfast_leases_table", "holdfast_leases"))
                    .load().migrate();
            new SchemaInstaller(release.dataSource()).install(Map.of(
                    HoldfastTable.OFFLINE_LOCKS, "holdfast_locks", HoldfastTable.LEASES, "holdfast_leases"));

            Map<String, List<String>> expected = Catalog.of(chain);
            assertThat(expected.keySet()).containsAll(db.kind() == TestDatabase.Kind.POSTGRESQL
                    ? List.of("holdfast_locks", "holdfast_leases", "holdfast_leases_queue", "holdfast_leases_timelines")
                    : List.of("holdfast_locks", "holdfast_leases", "holdfast_leases_queue"));
            Map<String, List<String>> actual = Catalog.of(release);
            Catalog.assertSame(actual, expected);
            System.out.printf("[%s] catalog compared: %s%n", db.id(), summary(expected));
        }
    }

    private static String summary(Map<String, List<String>> catalog) {
        StringBuilder s = new StringBuilder();
        catalog.forEach((table, lines) -> s.append(table).append(' ').append(lines.size()).append(" lines; "));
        return s.toString();
    }
}
