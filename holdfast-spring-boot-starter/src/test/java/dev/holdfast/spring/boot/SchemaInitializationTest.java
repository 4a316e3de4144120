package dev.holdfast.spring.boot;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.pessimistic.offline.LockManager;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code holdfast.jdbc.initialize-schema}: Holdfast's tables are created by a Boot
 * {@code DataSourceScriptDatabaseInitializer} before any bean that uses them, on embedded databases by
 * default, always or never when configured; a bad table name stops the start and creates nothing.
 */
class SchemaInitializationTest {

    private static JdbcDataSource h2() {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:schema-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        return ds;
    }

    private static ApplicationContextRunner runner(DataSource dataSource) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(HoldfastAutoConfiguration.class))
                .withBean(DataSource.class, () -> new DelegatingDataSource(dataSource)); // the test closes the pool
    }

    private static boolean tableExists(DataSource dataSource, String table) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            for (String name : new String[] {table, table.toUpperCase()}) {
                try (ResultSet rs = c.getMetaData().getTables(c.getCatalog(), null, name, null)) {
                    if (rs.next()) {
                        return true;
                    }
                }
            }
            return false;
        }
    }

    /** A bean that locks while the context starts: it runs after the tables exist. */
    static final class LocksAtStartup {
        final LockId lockId;

        LocksAtStartup(LockManager locks) {
            lockId = locks.tryLock("order", "startup", "boot");
        }
    }

    @Test
    void anEmbeddedDatabaseGetsItsTablesByDefaultBeforeAnyBeanUsesThem() throws Exception {
        JdbcDataSource ds = h2();
        runner(ds).withBean(LocksAtStartup.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).hasSingleBean(HoldfastDataSourceScriptDatabaseInitializer.class);
            assertThat(tableExists(ds, "holdfast_locks")).isTrue();
            assertThat(tableExists(ds, "holdfast_leases")).isTrue();
            LockManager locks = context.getBean(LockManager.class);
            locks.checkLock(context.getBean(LocksAtStartup.class).lockId, "order", "startup", "boot");
            assertThat(context.getBean(LeaseService.class).tryAcquire("job", "a", Duration.ofMinutes(1)))
                    .isPresent();
        });
    }

    @Test
    void neverCreatesNothing() throws Exception {
        JdbcDataSource ds = h2();
        runner(ds).withPropertyValues("holdfast.jdbc.initialize-schema=never").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(tableExists(ds, "holdfast_locks")).isFalse();
            assertThat(tableExists(ds, "holdfast_leases")).isFalse();
        });
    }

    @Test
    void aBadTableNameStopsTheStartAndCreatesNothing() throws Exception {
        JdbcDataSource ds = h2();
        runner(ds)
                .withPropertyValues("holdfast.offline.table=locks; DROP TABLE x")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .rootCause()
                            .isInstanceOf(IllegalArgumentException.class)
                            .hasMessageContaining("locks; DROP TABLE x");
                });
        assertThat(tableExists(ds, "holdfast_leases")).isFalse();
    }

    @DatabaseTest
    void aServerDatabaseGetsTablesOnlyWhenAskedUnderTheConfiguredNames(TestDatabase db) throws Exception {
        String locksTable = db.newTableName("hf_init_locks");
        String leasesTable = db.newTableName("hf_init_leases");
        db.dropAfterTest(leasesTable + "_queue");
        try (HikariDataSource pool = db.newPool(2)) {
            String[] names = {"holdfast.offline.table=" + locksTable, "holdfast.lease.table=" + leasesTable};
            if (db.kind() != TestDatabase.Kind.H2) { // a server is not embedded: the default creates nothing
                runner(pool).withPropertyValues(names).run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(tableExists(pool, locksTable)).isFalse();
                    assertThat(tableExists(pool, leasesTable)).isFalse();
                });
            }
            runner(pool)
                    .withPropertyValues(names)
                    .withPropertyValues("holdfast.jdbc.initialize-schema=always")
                    .withBean(LocksAtStartup.class)
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        assertThat(tableExists(pool, locksTable)).isTrue();
                        assertThat(tableExists(pool, leasesTable)).isTrue();
                        assertThat(db.queryLong("SELECT COUNT(*) FROM " + locksTable + " WHERE lock_owner = 'boot'"))
                                .isEqualTo(1);
                    });
            // a second start over existing tables: idempotent
            runner(pool)
                    .withPropertyValues(names)
                    .withPropertyValues("holdfast.jdbc.initialize-schema=always")
                    .run(context -> assertThat(context).hasNotFailed());
        }
    }
}
