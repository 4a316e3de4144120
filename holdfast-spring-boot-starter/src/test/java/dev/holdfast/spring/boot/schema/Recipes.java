package dev.holdfast.spring.boot.schema;

import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.lease.Leases;
import dev.holdfast.pessimistic.offline.LockManager;
import dev.holdfast.spring.boot.HoldfastAutoConfiguration;
import dev.holdfast.testing.TestDatabase;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;

/** What the recipe tests share: the application, the recipe's properties, and what a recipe must leave. */
final class Recipes {

    private Recipes() {}

    /** An application on {@code schema} with Holdfast's auto-configuration and {@code autoConfigurations}. */
    static ApplicationContextRunner application(PrivateSchema schema, Class<?>... autoConfigurations) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(autoConfigurations))
                .withConfiguration(AutoConfigurations.of(
                        HoldfastAutoConfiguration.class,
                        HoldfastSchemaCheckAutoConfiguration.class)) // the check runs after the migrations
                // the test closes the pool, not the context
                .withBean(DataSource.class, () -> new DelegatingDataSource(schema.dataSource()))
                .withBean(UsesHoldfastAtStartup.class);
    }

    /** The properties of a recipe file in the test resources, as {@code key=value}. */
    static String[] properties(String resource) {
        Properties properties = new Properties();
        try (InputStream in = Objects.requireNonNull(Recipes.class.getResourceAsStream(resource), resource)) {
            properties.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> pairs = new ArrayList<>();
        properties.forEach((key, value) -> pairs.add(key + "=" + value));
        assertThat(pairs).as(resource).isNotEmpty();
        return pairs.toArray(String[]::new);
    }

    /**
     * {@code schema} has Holdfast's tables exactly as {@link SchemaInstaller} creates them under the
     * default names: compared, catalog against catalog, with a schema the installer filled.
     */
    static void assertHasTheInstallersTables(TestDatabase db, PrivateSchema schema) throws SQLException {
        try (PrivateSchema reference = PrivateSchema.create(db, "hf_installed")) {
            new SchemaInstaller(reference.dataSource())
                    .install(Map.of(
                            HoldfastTable.OFFLINE_LOCKS, "holdfast_locks", HoldfastTable.LEASES, "holdfast_leases"));
            Map<String, List<String>> expected = Catalog.of(reference);
            assertThat(expected).containsKeys("holdfast_locks", "holdfast_leases", "holdfast_leases_queue");
            Catalog.assertSame(Catalog.of(schema), expected);
        }
    }

    /** Runs one statement on {@code schema}. */
    static void execute(PrivateSchema schema, String sql) throws SQLException {
        try (Connection c = schema.dataSource().getConnection();
                Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    /** The rows of one column of {@code sql}, run on {@code schema}, as strings. */
    static List<String> column(PrivateSchema schema, String sql) throws SQLException {
        List<String> values = new ArrayList<>();
        try (Connection c = schema.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) {
                values.add(rs.getString(1));
            }
        }
        return values;
    }

    /** Versions Flyway applied, in order, from the history table {@code table} of {@code schema}. */
    static List<String> flywayVersions(PrivateSchema schema, String table) throws SQLException {
        String quote = schema.kind() == TestDatabase.Kind.MARIADB ? "`" : "\"";
        // not the markers without a version that Flyway writes on some databases (history table created)
        return column(
                schema,
                "SELECT " + quote + "version" + quote + " FROM " + quote + table + quote
                        + " WHERE " + quote + "success" + quote + " = TRUE AND " + quote + "version" + quote
                        + " IS NOT NULL"
                        + " ORDER BY " + quote + "installed_rank" + quote);
    }

    /** A bean that locks and takes a lease while the context starts: it runs after the tables exist. */
    static final class UsesHoldfastAtStartup {

        UsesHoldfastAtStartup(LockManager locks, Leases leases) {
            locks.tryLock("order", "startup-" + System.nanoTime(), "boot");
            assertThat(leases.tryAcquire("startup-" + System.nanoTime(), "boot", Duration.ofMinutes(1)))
                    .isPresent();
        }
    }
}
