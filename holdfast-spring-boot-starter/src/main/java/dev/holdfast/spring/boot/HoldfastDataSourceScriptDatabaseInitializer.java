package dev.holdfast.spring.boot;

import dev.holdfast.internal.Arguments;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.jdbc.dialect.Dialect;
import org.springframework.boot.jdbc.init.DataSourceScriptDatabaseInitializer;
import org.springframework.boot.sql.init.DatabaseInitializationMode;
import org.springframework.boot.sql.init.DatabaseInitializationSettings;
import org.springframework.core.io.Resource;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * Creates Holdfast's tables at startup the way Spring Boot initializes a database: as a
 * {@link DataSourceScriptDatabaseInitializer}, so Boot runs it before every bean that depends on
 * database initialization (the lock manager and the lease service do) and after the application's
 * own schema scripts, and {@code holdfast.jdbc.initialize-schema} decides when it runs
 * ({@code embedded}, the default: only on an embedded database such as in-memory H2; {@code always};
 * {@code never}: the schema comes from Flyway or Liquibase, which can run the same scripts).
 *
 * <p>The scripts are the ones shipped in {@code holdfast-core} for the dialect (on H2 with the clock
 * function first). They run through {@link SchemaInstaller}, which fills in the configured table
 * names and tolerates two servers creating the same table at once; every statement is
 * {@code CREATE … IF NOT EXISTS}, so running at every start is harmless.
 */
public class HoldfastDataSourceScriptDatabaseInitializer extends DataSourceScriptDatabaseInitializer {

    private final SchemaInstaller installer;
    private final Map<HoldfastTable, String> names;

    /**
     * @param dataSource the pool (its own connection, autocommit)
     * @param dialect    the database's dialect
     * @param mode       when to create the tables
     * @param names      the table name for each table to create
     */
    public HoldfastDataSourceScriptDatabaseInitializer(
            DataSource dataSource, Dialect dialect, DatabaseInitializationMode mode, Map<HoldfastTable, String> names) {
        super(Arguments.notNull(dataSource, "dataSource"), settings(dialect, mode, names));
        this.installer = new SchemaInstaller(dataSource, dialect);
        this.names = Map.copyOf(names);
        this.names.forEach(
                (table, name) -> SchemaInstaller.script(dialect, table, name)); // a bad name fails at startup
    }

    /** Runs the scripts Boot resolved (those of this dialect that exist) through the installer, in one go. */
    @Override
    protected void runScripts(Scripts scripts) {
        Map<HoldfastTable, String> tables = new EnumMap<>(HoldfastTable.class);
        boolean clock = false;
        for (Resource script : scripts) {
            String file = script.getFilename();
            clock |= SchemaInstaller.CLOCK_SCRIPT.equals(file);
            names.forEach((table, name) -> {
                if (table.scripts().contains(file)) {
                    tables.put(table, name);
                }
            });
        }
        if (!tables.isEmpty()) {
            installer.install(tables); // on H2 with the clock function
        } else if (clock) {
            installer.installClock();
        }
    }

    private static DatabaseInitializationSettings settings(
            Dialect dialect, DatabaseInitializationMode mode, Map<HoldfastTable, String> names) {
        Arguments.notNull(dialect, "dialect");
        Arguments.notNull(mode, "mode");
        Arguments.notNull(names, "names");
        String folder = "classpath:dev/holdfast/schema/" + dialect.id() + "/";
        List<String> locations = new ArrayList<>();
        if (dialect == Dialect.H2) {
            locations.add(folder + SchemaInstaller.CLOCK_SCRIPT);
        }
        for (HoldfastTable table : HoldfastTable.values()) {
            if (names.containsKey(table)) {
                table.scripts().forEach(script -> locations.add(folder + script));
            }
        }
        DatabaseInitializationSettings settings = new DatabaseInitializationSettings();
        settings.setSchemaLocations(locations);
        settings.setMode(mode);
        return settings;
    }
}
