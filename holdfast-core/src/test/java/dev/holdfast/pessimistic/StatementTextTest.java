package dev.holdfast.pessimistic;

import dev.holdfast.jdbc.dialect.Dialect;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** A blocker's statement never shows a literal or a bind value, and is cut to a documented length. */
class StatementTextTest {

    @Test
    void everyLiteralBecomesAPlaceholder() {
        assertThat(StatementText.shown(Dialect.POSTGRESQL,
                "UPDATE users SET password = 'hunter2', pin = 1234, ratio = 1.5e-3 WHERE id = $1 AND t2.x = 7"))
                .isEqualTo("UPDATE users SET password = ?, pin = ?, ratio = ? WHERE id = $1 AND t2.x = ?");
        assertThat(StatementText.shown(Dialect.MARIADB,
                "SELECT * FROM t WHERE a = 'it''s' AND b = \"secret\" AND c = 'a\\'b' AND d = 0x1F AND e1 = -5"))
                .isEqualTo("SELECT * FROM t WHERE a = ? AND b = ? AND c = ? AND d = ? AND e1 = -?");
    }

    @Test
    void doubleQuotesNameColumnsOnPostgreSqlAndH2() {
        assertThat(StatementText.shown(Dialect.POSTGRESQL, "SELECT \"Secret Column\" FROM t WHERE k = 'v'"))
                .isEqualTo("SELECT \"Secret Column\" FROM t WHERE k = ?");
        assertThat(StatementText.shown(Dialect.H2, "SELECT \"A1\" FROM T WHERE K = 'v'"))
                .isEqualTo("SELECT \"A1\" FROM T WHERE K = ?");
    }

    @Test
    void dollarQuotesAndLiteralsCutOffByTheDatabaseAreHiddenToTheEnd() {
        assertThat(StatementText.shown(Dialect.POSTGRESQL, "SELECT $tag$ secret $tag$, $$ more $$ FROM t"))
                .isEqualTo("SELECT ?, ? FROM t");
        assertThat(StatementText.shown(Dialect.POSTGRESQL, "INSERT INTO t VALUES ('a long secret that the datab"))
                .isEqualTo("INSERT INTO t VALUES (?");
    }

    @Test
    void h2ParametersAfterTheStatementAreDropped() {
        assertThat(StatementText.shown(Dialect.H2, "SELECT val FROM T WHERE ID = ? AND V <> ? {1: 1, 2: 'bind-secret'}"))
                .isEqualTo("SELECT val FROM T WHERE ID = ? AND V <> ?");
    }

    @Test
    void whitespaceIsCollapsedAndALongStatementIsCut() {
        assertThat(StatementText.shown(Dialect.MARIADB, "  SELECT\n\t a\n FROM   t ")).isEqualTo("SELECT a FROM t");
        String shown = StatementText.shown(Dialect.POSTGRESQL, "SELECT " + "x, ".repeat(200) + "y FROM t");
        assertThat(shown).hasSize(Blocker.MAX_STATEMENT_LENGTH).endsWith("…").startsWith("SELECT x, x,");
        assertThat(StatementText.shown(Dialect.H2, null)).isNull();
        assertThat(StatementText.shown(Dialect.H2, "  ")).isNull();
    }
}
