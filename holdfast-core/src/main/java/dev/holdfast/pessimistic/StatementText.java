package dev.holdfast.pessimistic;

import dev.holdfast.jdbc.dialect.Dialect;

import org.jspecify.annotations.Nullable;

/**
 * A blocker's statement as {@link Blocker#statement()} shows it: no bind value and no literal (a
 * MariaDB client-side prepared statement reaches the server with its values written in, and H2
 * lists a statement's parameters after it), whitespace collapsed, cut to
 * {@link Blocker#MAX_STATEMENT_LENGTH}.
 *
 * <p>Every quoted string (single quotes; double quotes too on MariaDB, where they quote strings;
 * PostgreSQL dollar quotes) and every number that is not part of a name becomes {@code ?}. A
 * string the database cut off before its end (PostgreSQL keeps {@code track_activity_query_size}
 * bytes) is replaced to the end. Erring towards hiding: a backslash inside quotes always escapes
 * the next character, which may hide more than the literal.
 */
final class StatementText {

    private StatementText() {
    }

    static @Nullable String shown(Dialect dialect, @Nullable String sql) {
        if (sql == null || sql.isBlank()) {
            return null;
        }
        String text = dialect == Dialect.H2 ? withoutH2Parameters(sql) : sql;
        String redacted = redact(text, dialect == Dialect.MARIADB);
        return cut(redacted.strip().replaceAll("\\s+", " "));
    }

    /** H2 appends the parameters of a prepared statement: {@code … WHERE id = ? {1: 42}}. */
    private static String withoutH2Parameters(String sql) {
        int parameters = sql.lastIndexOf(" {1: ");
        return parameters < 0 ? sql : sql.substring(0, parameters);
    }

    static String redact(String sql, boolean doubleQuotedStrings) {
        StringBuilder out = new StringBuilder(sql.length());
        int i = 0;
        int n = sql.length();
        while (i < n) {
            char c = sql.charAt(i);
            String tag = c == '$' ? dollarTag(sql, i) : null;
            if (c == '\'' || (c == '"' && doubleQuotedStrings)) {
                i = endOfQuoted(sql, i, c);
                out.append('?');
            } else if (tag != null) {
                int end = sql.indexOf(tag, i + tag.length());
                i = end < 0 ? n : end + tag.length();
                out.append('?');
            } else if (Character.isDigit(c) && !partOfName(sql, i)) {
                i = endOfNumber(sql, i);
                out.append('?');
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }

    /** The index after the literal quoted by {@code quote} that starts at {@code start}. */
    private static int endOfQuoted(String sql, int start, char quote) {
        int i = start + 1;
        while (i < sql.length()) {
            char c = sql.charAt(i);
            if (c == '\\') {
                i += 2;
            } else if (c == quote) {
                if (i + 1 < sql.length() && sql.charAt(i + 1) == quote) {
                    i += 2; // a doubled quote stays inside the literal
                } else {
                    return i + 1;
                }
            } else {
                i++;
            }
        }
        return sql.length();
    }

    /** {@code $$} or {@code $tag$} starting at {@code i}, or null (a {@code $1} placeholder is none). */
    private static @Nullable String dollarTag(String sql, int i) {
        int j = i + 1;
        while (j < sql.length() && (Character.isLetter(sql.charAt(j)) || sql.charAt(j) == '_')) {
            j++;
        }
        return j < sql.length() && sql.charAt(j) == '$' && (i == 0 || !isNameChar(sql.charAt(i - 1)))
                ? sql.substring(i, j + 1) : null;
    }

    private static boolean partOfName(String sql, int i) {
        return i > 0 && (isNameChar(sql.charAt(i - 1)) || sql.charAt(i - 1) == '$');
    }

    private static boolean isNameChar(char c) {
        return Character.isLetterOrDigit(c) || c == '_';
    }

    /** Digits, a fraction, an exponent, or a hexadecimal {@code 0x…}: all of one number. */
    private static int endOfNumber(String sql, int start) {
        int i = start;
        while (i < sql.length() && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '.'
                || ((sql.charAt(i) == '+' || sql.charAt(i) == '-') && (sql.charAt(i - 1) == 'e' || sql.charAt(i - 1) == 'E')))) {
            i++;
        }
        return i;
    }

    private static String cut(String text) {
        return text.length() <= Blocker.MAX_STATEMENT_LENGTH ? text
                : text.substring(0, Blocker.MAX_STATEMENT_LENGTH - 1) + "…";
    }
}
