package dev.holdfast.jdbc;

import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The DDL shipped in the jar runs unchanged as Flyway migrations, and the installer agrees with it. */
class SchemaScriptsFlywayTest {

    @DatabaseTest
    void scriptsRunUnderFlywayAndTheInstallerThenFindsEverything(TestDatabase db) throws Exception {
        String locks = db.newTableName("fw_locks");
        String leases = db.newTableName("fw_leases");
        String history = db.newTableName("fw_history");
        MigrateResult result = Flyway.configure()
                .dataSource(db.dataSource())
                .locations("classpath:dev/holdfast/schema/" + db.kind().id())
                .placeholders(Map.of(HoldfastTable.OFFLINE_LOCKS.placeholder(), locks,
                        HoldfastTable.LEASES.placeholder(), leases))
                .table(history)
                .baselineOnMigrate(true)
                .baselineVersion("0")
                .load()
                .migrate();
        assertThat(result.success).isTrue();
        assertThat(result.migrationsExecuted).isEqualTo(db.kind() == TestDatabase.Kind.H2 ? 11 : 10);
        assertThat(db.queryLong("SELECT COUNT(*) FROM " + locks)).isZero();
        assertThat(db.queryLong("SELECT COUNT(ended_lock_id) + COUNT(ended_reason) FROM " + locks))
                .as("the later script added the ended_* columns").isZero();
        assertThat(db.queryLong("SELECT COUNT(broken_by) FROM " + leases)).as("and the broken_* columns").isZero();
        if (db.kind() == TestDatabase.Kind.POSTGRESQL) {
            assertThat(db.queryLong("SELECT COUNT(handed_to) FROM " + leases)).as("and the hand-off columns").isZero();
            assertThat(db.queryLong("SELECT COUNT(listener) + COUNT(lease_owner) FROM " + leases + "_queue")).isZero();
            assertThat(db.queryLong("SELECT COUNT(first_seen) FROM " + leases + "_timelines")).as("the failover grace's").isZero();
        }
        if (db.kind() == TestDatabase.Kind.MARIADB) {
            assertThat(db.queryLong("SELECT COUNT(handed_to) + COUNT(served) + COUNT(waiters_until) FROM " + leases))
                    .as("the hand-off columns and the waiter mark").isZero();
            assertThat(db.queryLong("SELECT COUNT(listener) + COUNT(lease_owner) + COUNT(ttl_micros) + COUNT(place) FROM "
                    + leases + "_queue")).as("and the queue's stored place").isZero();
        }
        assertThat(db.queryLong("SELECT COUNT(*) FROM " + leases)).isZero();

        // Idempotent on top of Flyway's work.
        SchemaInstaller installer = new SchemaInstaller(db.dataSource());
        installer.install(HoldfastTable.OFFLINE_LOCKS, locks);
        installer.install(HoldfastTable.LEASES, leases);
        installer.install(HoldfastTable.LEASES, leases);
        assertThat(db.queryLong("SELECT COUNT(*) FROM " + leases)).isZero();
    }
}
