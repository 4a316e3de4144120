package dev.holdfast.pessimistic;

import dev.holdfast.jdbc.dialect.Dialect;
import org.jspecify.annotations.Nullable;

import java.util.List;

/**
 * A blocker's statement as {@link Blocker#statement()} shows it: no bind value and no literal (a
 * MariaDB client-side prepared statement reaches the server with its values written in, and H2 lists
 * a statement's parameters after it), no comment, whitespace collapsed, cut to
 * {@link Blocker#MAX_STATEMENT_LENGTH}.
 *
 * <p>The text is read token by token by the database's own lexical rules ({@link SqlReading}): every
 * string (in each of the database's forms) and every number becomes {@code ?}, every comment a space,
 * and names, quoted ones too, stay. Where the rules depend on a setting of the blocker's session
 * (PostgreSQL {@code standard_conforming_strings}, MariaDB {@code NO_BACKSLASH_ESCAPES} and
 * {@code ANSI_QUOTES}, and the server version that decides whether MariaDB runs a versioned
 * {@code /*!…} comment), the text is read each way and shown only as far as every reading agrees.
 * Where a reading cannot be sure of what follows (an unterminated string, comment or name, a prefix
 * before a quote that the database does not define), nothing after that point is shown, and the text
 * ends in {@code …}. A reading that ends inside a string, name or comment of a statement the database
 * shows whole is not how the database read it (it ran the statement), and is left out.
 */
final class StatementText {

    private StatementText() {}

    /**
     * @param sql   the text the database shows of the statement
     * @param whole the database shows all of it: not cut by its limit ({@code track_activity_query_size}) or ours
     */
    static @Nullable String shown(Dialect dialect, @Nullable String sql, boolean whole) {
        if (sql == null || sql.isBlank()) {
            return null;
        }
        List<SqlReading.Shown> readings =
                SqlReading.of(dialect).stream().map(r -> r.shown(sql)).toList();
        List<SqlReading.Shown> possible =
                readings.stream().filter(r -> !whole || !r.unterminated()).toList();
        String agreed = null;
        for (SqlReading.Shown reading : possible.isEmpty() ? readings : possible) {
            agreed = agreed == null ? reading.text() : agreement(agreed, reading.text());
        }
        return agreed == null || agreed.isBlank() ? null : cut(agreed.strip());
    }

    /** What two readings show alike: all of it, or their common beginning and {@code …}. */
    private static String agreement(String a, String b) {
        if (a.equals(b)) {
            return a;
        }
        int same = 0;
        while (same < a.length() && same < b.length() && a.charAt(same) == b.charAt(same)) {
            same++;
        }
        String common = a.substring(0, same).stripTrailing();
        return common.endsWith(SqlReading.CUT) ? common : common + SqlReading.CUT;
    }

    private static String cut(String text) {
        return text.length() <= Blocker.MAX_STATEMENT_LENGTH
                ? text
                : text.substring(0, Blocker.MAX_STATEMENT_LENGTH - 1) + SqlReading.CUT;
    }
}
