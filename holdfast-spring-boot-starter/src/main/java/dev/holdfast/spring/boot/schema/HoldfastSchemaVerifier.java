package dev.holdfast.spring.boot.schema;

import dev.holdfast.DatabaseException;
import dev.holdfast.internal.Arguments;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaCheck;
import dev.holdfast.jdbc.dialect.Dialect;
import org.springframework.beans.factory.InitializingBean;

import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * Checks at start-up that Holdfast's tables are there and current ({@link SchemaCheck}), after every
 * database initializer (Holdfast's own scripts, Flyway, Liquibase, {@code spring.sql.init}) and before
 * every bean that depends on database initialization: a missing table or column stops the start with
 * a {@link HoldfastSchemaException}, which {@link HoldfastSchemaFailureAnalyzer} explains. A database
 * that cannot be reached at start-up is not a schema problem: the check then stays silent, and the
 * first call (or the health indicator) says so.
 *
 * <p>{@code holdfast.jdbc.schema-check=false} turns the check off.
 */
public class HoldfastSchemaVerifier implements InitializingBean {

    private final SchemaCheck check;
    private final Map<HoldfastTable, String> tables;
    private final String initializeSchema;

    /**
     * @param dataSource       the pool (a connection of its own, autocommit)
     * @param dialect          the database's dialect
     * @param tables           the configured name of each table to check
     * @param initializeSchema the value of {@code holdfast.jdbc.initialize-schema}, for the report
     */
    public HoldfastSchemaVerifier(
            DataSource dataSource, Dialect dialect, Map<HoldfastTable, String> tables, String initializeSchema) {
        this.check = new SchemaCheck(Arguments.notNull(dataSource, "dataSource"), dialect);
        this.tables = Map.copyOf(tables);
        this.initializeSchema = Arguments.notNull(initializeSchema, "initializeSchema");
    }

    /**
     * Runs the check.
     *
     * @throws HoldfastSchemaException if a table or column is missing
     */
    @Override
    public void afterPropertiesSet() {
        List<SchemaCheck.Problem> problems;
        try {
            problems = check.check(tables);
        } catch (DatabaseException unreachable) {
            return;
        }
        if (!problems.isEmpty()) {
            throw new HoldfastSchemaException(problems, initializeSchema);
        }
    }
}
