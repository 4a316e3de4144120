package dev.holdfast.pessimistic;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.pessimistic.RandomStatements.Column;
import dev.holdfast.pessimistic.RandomStatements.Setting;
import dev.holdfast.pessimistic.RandomStatements.Statement;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The generated statements of {@link StatementTextPropertyTest} are what the database makes of them:
 * run on the server in each session setting, each returns exactly the columns (labels and values) its
 * generator meant. So the generator's idea of where a string, number, comment or name begins and ends
 * is the database's own, and the property test proves the masking against the database's rules.
 */
class StatementTextDatabaseTest {

    /** Statements run per setting (PostgreSQL has two settings, MariaDB four, H2 one). */
    private static final int STATEMENTS = 500;

    @DatabaseTest
    void everyGeneratedStatementIsReadByTheDatabaseAsItsGeneratorMeant(TestDatabase db) throws SQLException {
        Dialect dialect = Dialect.valueOf(db.kind().name());
        long seed = new Random().nextLong();
        Random random = new Random(seed);
        int ambiguous = 0;
        for (Setting setting : Setting.of(dialect)) {
            try (HikariDataSource pool = db.newPool(1);
                    Connection c = pool.getConnection();
                    java.sql.Statement s = c.createStatement()) {
                for (String apply : setting.apply()) {
                    s.execute(apply);
                }
                s.setEscapeProcessing(false);
                for (int k = 0; k < STATEMENTS; k++) {
                    Statement statement = RandomStatements.next(setting, random);
                    ambiguous += statement.ambiguous() ? 1 : 0;
                    runs(s, statement, "seed " + seed);
                }
            } // the setting leaves with the pool of its own
        }
        System.out.printf(
                "[%s] %d generated statements ran as generated (%d readable otherwise), seed %d%n",
                db.id(), STATEMENTS * Setting.of(dialect).size(), ambiguous, seed);
    }

    private static void runs(java.sql.Statement s, Statement statement, String seed) throws SQLException {
        String as = seed + ": " + statement;
        try (ResultSet rs = s.executeQuery(statement.sql())) {
            ResultSetMetaData meta = rs.getMetaData();
            List<Column> columns = statement.columns();
            assertThat(meta.getColumnCount()).as(as).isEqualTo(columns.size());
            assertThat(rs.next()).as(as).isTrue();
            for (int k = 0; k < columns.size(); k++) {
                Column column = columns.get(k);
                assertThat(meta.getColumnLabel(k + 1)).as(as).isEqualToIgnoringCase(column.label());
                String value = rs.getString(k + 1);
                if (column.value() instanceof String text) {
                    assertThat(value).as(as).isEqualTo(text);
                } else if (column.value() instanceof BigDecimal number) {
                    assertThat(new BigDecimal(value)).as(as).isEqualByComparingTo(number);
                } else if (column.value() instanceof Double number) {
                    assertThat(Double.parseDouble(value)).as(as).isCloseTo(number, within(Math.abs(number) * 1e-9));
                }
            }
        } catch (SQLException e) {
            throw new AssertionError(as + ": " + e.getMessage(), e);
        }
    }
}
