package dev.holdfast.pessimistic;

import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.pessimistic.RandomStatements.Setting;
import dev.holdfast.pessimistic.RandomStatements.Statement;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Generated statements of every lexical form, 10,000 per database: what a blocker's statement shows
 * never holds a literal or a comment's text (their secrets are the only lower-case letters and digits
 * of a statement), whole or cut anywhere; and it is exactly the statement with every literal a
 * {@code ?} where no session setting could read it otherwise.
 */
class StatementTextPropertyTest {

    @Property(tries = 10_000)
    void postgresql(@ForAll("postgresqlStatements") Statement statement) {
        check(statement);
    }

    @Property(tries = 10_000)
    void mariadb(@ForAll("mariadbStatements") Statement statement) {
        check(statement);
    }

    @Property(tries = 10_000)
    void h2(@ForAll("h2Statements") Statement statement) {
        check(statement);
    }

    @Provide
    Arbitrary<Statement> postgresqlStatements() {
        return statements(Dialect.POSTGRESQL);
    }

    @Provide
    Arbitrary<Statement> mariadbStatements() {
        return statements(Dialect.MARIADB);
    }

    @Provide
    Arbitrary<Statement> h2Statements() {
        return statements(Dialect.H2);
    }

    private static Arbitrary<Statement> statements(Dialect dialect) {
        List<Setting> settings = Setting.of(dialect);
        return Arbitraries.randomValue(
                random -> RandomStatements.next(settings.get(random.nextInt(settings.size())), random));
    }

    private static void check(Statement statement) {
        Dialect dialect = statement.setting().dialect();
        String sql = statement.sql();
        String shown = StatementText.shown(dialect, sql, true);
        assertThat(shown).as(statement.toString()).doesNotContainPattern("[a-z0-9]");
        String expected = cut(statement.shown());
        if (statement.ambiguous()) {
            assertThat(shown)
                    .as(statement.toString())
                    .satisfiesAnyOf(
                            s -> assertThat(s).isEqualTo(expected),
                            s -> assertThat(s)
                                    .endsWith("…")
                                    .satisfies(t -> assertThat(expected).startsWith(t.substring(0, t.length() - 1))));
        } else {
            assertThat(shown).as(statement.toString()).isEqualTo(expected);
        }
        if (dialect == Dialect.H2) {
            // H2 lists a prepared statement's parameters after its text
            assertThat(StatementText.shown(dialect, sql + " {1: 'bind-value', 2: 42}", true))
                    .as(statement.toString())
                    .isEqualTo(shown);
        }
        // the database (or the length the query reads) cut it anywhere
        Random cuts = new Random(sql.hashCode());
        for (int k = 0; k < 3; k++) {
            String part = sql.substring(0, cuts.nextInt(sql.length()));
            String shownPart = StatementText.shown(dialect, part, false);
            assertThat(shownPart == null ? "" : shownPart).as("cut: " + part).doesNotContainPattern("[a-z0-9]");
        }
    }

    private static String cut(String text) {
        return text.length() <= Blocker.MAX_STATEMENT_LENGTH
                ? text
                : text.substring(0, Blocker.MAX_STATEMENT_LENGTH - 1) + "…";
    }
}
