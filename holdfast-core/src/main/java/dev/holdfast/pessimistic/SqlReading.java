package dev.holdfast.pessimistic;

import dev.holdfast.jdbc.dialect.Dialect;

import java.util.ArrayList;
import java.util.List;

/**
 * One way to read a statement's text by a database's lexical rules, where they depend on a setting of
 * the session that sent it (which an observer cannot see), and the text that reading shows: every
 * literal a {@code ?}, every comment a space, the rest as written, whitespace collapsed.
 * {@link StatementText} shows only what every reading of a dialect agrees on.
 *
 * @param dialect              whose lexical rules
 * @param backslashEscapes     a backslash escapes the next character in a plain {@code '…'} string:
 *                             PostgreSQL with {@code standard_conforming_strings} off, MariaDB
 *                             without {@code NO_BACKSLASH_ESCAPES}
 * @param ansiQuotes           MariaDB's {@code ANSI_QUOTES}: {@code "…"} names a column, else it is a
 *                             string (shown as {@code ?} either way)
 * @param versionedCommentsRun MariaDB runs the SQL inside {@code /*!50001 …}{@code *}{@code /} (the
 *                             server is at least that version), else it is a comment
 */
record SqlReading(Dialect dialect, boolean backslashEscapes, boolean ansiQuotes, boolean versionedCommentsRun) {

    /** Ends a text that stops where the reading cannot be sure of what follows. */
    static final String CUT = "…";

    /** Every reading a statement of {@code dialect} may need. */
    static List<SqlReading> of(Dialect dialect) {
        return switch (dialect) {
            case H2 -> List.of(new SqlReading(dialect, false, false, false));
            case POSTGRESQL ->
                List.of(new SqlReading(dialect, false, false, false), new SqlReading(dialect, true, false, false));
            case MARIADB -> {
                List<SqlReading> readings = new ArrayList<>();
                for (boolean backslash : new boolean[] {true, false}) {
                    for (boolean ansi : new boolean[] {false, true}) {
                        for (boolean versioned : new boolean[] {true, false}) {
                            readings.add(new SqlReading(dialect, backslash, ansi, versioned));
                        }
                    }
                }
                yield List.copyOf(readings);
            }
        };
    }

    /**
     * What one reading shows of a statement.
     *
     * @param text         ends in {@value #CUT} where the reading stopped unsure
     * @param unterminated the text ended inside a string, name or comment: no reading of a whole
     *                     statement that the database ran
     */
    record Shown(String text, boolean unterminated) {}

    Shown shown(String sql) {
        Lexer lexer = new Lexer(this, sql);
        String text = lexer.shown();
        return new Shown(text, lexer.unterminated);
    }

    /** Reads one statement once, left to right. */
    private static final class Lexer {
        private final SqlReading reading;
        private final Dialect dialect;
        private final String sql;
        private final int n;
        private final StringBuilder out = new StringBuilder();
        private int i;
        private boolean space;
        /** Inside MariaDB's {@code /*! …}: its end is SQL's too. */
        private boolean executable;
        /** Where to cut back to when the executable comment ends: its content is not shown (-1: shown). */
        private int hiddenFrom = -1;

        private boolean unterminated;

        Lexer(SqlReading reading, String sql) {
            this.reading = reading;
            this.dialect = reading.dialect();
            this.sql = sql;
            this.n = sql.length();
        }

        String shown() {
            while (i < n) {
                char c = sql.charAt(i);
                boolean sure;
                if (executable && sql.startsWith("*/", i)) {
                    sure = endOfExecutable();
                } else if (Character.isWhitespace(c)) {
                    space = true;
                    i++;
                    sure = true;
                } else if (lineComment()) {
                    i = endOfLine();
                    space = true;
                    sure = true;
                } else if (sql.startsWith("/*", i)) {
                    sure = blockComment();
                } else if (c == '\'') {
                    sure = literal(i + 1, '\'', reading.backslashEscapes());
                } else if (c == '"') {
                    sure = dialect == Dialect.MARIADB
                            ? literal(i + 1, '"', reading.backslashEscapes() && !reading.ansiQuotes())
                            : name(i, i + 1, '"');
                } else if (c == '`' && dialect != Dialect.POSTGRESQL) {
                    sure = name(i, i + 1, '`');
                } else if (c == '$' && dialect != Dialect.MARIADB) {
                    sure = dollar();
                } else if (isDigit(c) || (c == '.' && i + 1 < n && isDigit(sql.charAt(i + 1)))) {
                    number();
                    sure = true;
                } else if (isNameStart(c)) {
                    sure = word();
                } else if (dialect == Dialect.H2 && sql.startsWith("{1: ", i)) {
                    return out.toString(); // the parameters H2 lists after a statement: bind values
                } else if (dialect == Dialect.H2 && c == '?') {
                    parameter(); // ?1: a numbered parameter
                    sure = true;
                } else {
                    emit(i, i + 1);
                    i++;
                    sure = true;
                }
                if (!sure) {
                    return cut();
                }
            }
            unterminated = executable;
            return executable ? cut() : out.toString();
        }

        private String cut() {
            if (hiddenFrom >= 0) {
                out.setLength(hiddenFrom);
            }
            return out.toString().stripTrailing() + CUT;
        }

        private void emit(String text) {
            if (space && out.length() > 0) {
                out.append(' ');
            }
            space = false;
            out.append(text);
        }

        private void emit(int from, int to) {
            emit(sql.substring(from, to));
        }

        /** {@code --}, and per dialect {@code #} (MariaDB) and {@code //} (H2). */
        private boolean lineComment() {
            return switch (dialect) {
                case POSTGRESQL -> sql.startsWith("--", i);
                case H2 -> sql.startsWith("--", i) || sql.startsWith("//", i);
                // MariaDB: "--" starts a comment only before a space or a control character ("5--3" is 8)
                case MARIADB ->
                    sql.charAt(i) == '#'
                            || (sql.startsWith("--", i)
                                    && (i + 2 >= n || sql.charAt(i + 2) <= ' ' || sql.charAt(i + 2) == 127));
            };
        }

        /** The index after a line comment's end: MariaDB ends one at a line feed only. */
        private int endOfLine() {
            int j = i;
            while (j < n && sql.charAt(j) != '\n' && (dialect == Dialect.MARIADB || sql.charAt(j) != '\r')) {
                j++;
            }
            return j;
        }

        /** A comment at {@code /*}: nested on PostgreSQL and H2; MariaDB's {@code /*!} runs what it holds. */
        private boolean blockComment() {
            if (executable) {
                return false; // how MariaDB ends a comment inside /*! … */ is not worth a guess
            }
            if (dialect == Dialect.MARIADB) {
                int marker = sql.startsWith("/*!", i) ? i + 3 : sql.startsWith("/*M!", i) ? i + 4 : -1;
                if (marker >= 0) {
                    return executableComment(marker);
                }
            }
            int end = dialect == Dialect.MARIADB ? plainCommentEnd(i + 2) : nestedCommentEnd();
            if (end < 0) {
                unterminated = true;
                return false;
            }
            i = end;
            space = true;
            return true;
        }

        private int plainCommentEnd(int from) {
            int close = sql.indexOf("*/", from);
            return close < 0 ? -1 : close + 2;
        }

        private int nestedCommentEnd() {
            int depth = 0;
            int j = i;
            while (j < n) {
                if (sql.startsWith("/*", j)) {
                    depth++;
                    j += 2;
                } else if (sql.startsWith("*/", j)) {
                    j += 2;
                    if (--depth == 0) {
                        return j;
                    }
                } else {
                    j++;
                }
            }
            return -1;
        }

        /**
         * MariaDB's {@code /*! SQL *}{@code /}: the SQL is shown; with a version ({@code /*!50001},
         * {@code /*M!100500}) it runs only on servers of that version or newer, so it is read as SQL
         * or as a comment by the reading, and shown in neither.
         */
        private boolean executableComment(int marker) {
            int version = marker;
            while (version < n && isDigit(sql.charAt(version))) {
                version++;
            }
            if (version == marker) {
                emit(i, marker);
            } else if (reading.versionedCommentsRun()) {
                hiddenFrom = out.length();
            } else {
                int end = plainCommentEnd(version);
                if (end < 0) {
                    unterminated = true;
                    return false;
                }
                i = end;
                space = true;
                return true;
            }
            executable = true;
            i = version;
            return true;
        }

        private boolean endOfExecutable() {
            if (hiddenFrom >= 0) {
                out.setLength(hiddenFrom);
                hiddenFrom = -1;
                space = true;
            } else {
                emit("*/");
            }
            executable = false;
            i += 2;
            return true;
        }

        /** A string literal whose text starts at {@code from}: shown as {@code ?}. */
        private boolean literal(int from, char quote, boolean backslash) {
            int end = endOfQuoted(from, quote, backslash);
            emit("?");
            i = end;
            unterminated = end < 0;
            return end >= 0;
        }

        /** A quoted name ({@code "…"}, {@code `…`}), shown as written. */
        private boolean name(int start, int from, char quote) {
            int end = endOfQuoted(from, quote, false);
            if (end < 0) {
                unterminated = true;
                return false;
            }
            emit(start, end);
            i = end;
            return true;
        }

        /** The index after the closing {@code quote}, a doubled quote staying inside; -1 if there is none. */
        private int endOfQuoted(int from, char quote, boolean backslash) {
            int j = from;
            while (j < n) {
                char c = sql.charAt(j);
                if (backslash && c == '\\') {
                    j += 2;
                } else if (c != quote) {
                    j++;
                } else if (j + 1 < n && sql.charAt(j + 1) == quote) {
                    j += 2;
                } else {
                    return j + 1;
                }
            }
            return -1;
        }

        private void parameter() {
            int j = i + 1;
            while (j < n && isDigit(sql.charAt(j))) {
                j++;
            }
            emit(i, j);
            i = j;
        }

        /** PostgreSQL: {@code $1}, or {@code $tag$…$tag$}; H2: {@code $$…$$}. */
        private boolean dollar() {
            int j = i + 1;
            if (dialect == Dialect.POSTGRESQL && j < n && isDigit(sql.charAt(j))) {
                while (j < n && isDigit(sql.charAt(j))) {
                    j++;
                }
                emit(i, j);
                i = j;
                return true;
            }
            if (dialect == Dialect.POSTGRESQL && j < n && isNameStart(sql.charAt(j))) {
                while (j < n && isNamePart(sql.charAt(j)) && sql.charAt(j) != '$') {
                    j++;
                }
            }
            if (j >= n) {
                unterminated = true; // the text ends in what may be a dollar quote's tag
                return false;
            }
            if (sql.charAt(j) != '$') {
                emit(i, i + 1);
                i++;
                return true;
            }
            String tag = sql.substring(i, j + 1);
            int close = sql.indexOf(tag, j + 1);
            emit("?");
            i = close < 0 ? -1 : close + tag.length();
            unterminated = close < 0;
            return close >= 0;
        }

        /**
         * Digits, a fraction, an exponent, {@code 0x1F}, {@code 0b101}, {@code 1_000}: all of one number,
         * shown as {@code ?}. A sign belongs to it only after a decimal exponent and before a digit.
         */
        private void number() {
            boolean radix = sql.charAt(i) == '0' && i + 1 < n && "xXbBoO".indexOf(sql.charAt(i + 1)) >= 0;
            int j = i + 1;
            while (j < n) {
                char c = sql.charAt(j);
                boolean signedExponent = (c == '+' || c == '-')
                        && !radix
                        && (sql.charAt(j - 1) | 0x20) == 'e'
                        && j + 1 < n
                        && isDigit(sql.charAt(j + 1));
                if (Character.isLetterOrDigit(c) || c == '_' || c == '.' || signedExponent) {
                    j++;
                } else {
                    break;
                }
            }
            emit("?");
            i = j;
        }

        /** A word (keyword or name), or the prefix of a literal right after it ({@code E'…'}, {@code N'…'}). */
        private boolean word() {
            int j = i;
            while (j < n && isNamePart(sql.charAt(j))) {
                j++;
            }
            String word = sql.substring(i, j);
            if (j < n && sql.charAt(j) == '\'') {
                return prefixed(word, j);
            }
            if (word.equalsIgnoreCase("U")
                    && sql.startsWith("&", j)
                    && dialect != Dialect.MARIADB
                    && j + 1 < n
                    && (sql.charAt(j + 1) == '\'' || sql.charAt(j + 1) == '"')) {
                // U&'…' (standard string rules, a backslash escaping no quote) or the name U&"…"
                return sql.charAt(j + 1) == '\'' ? literal(j + 2, '\'', false) : name(i, j + 2, '"');
            }
            emit(i, j);
            i = j;
            return true;
        }

        /** A literal with a prefix the dialect knows; an unknown one stops the reading. */
        private boolean prefixed(String prefix, int quote) {
            String p = prefix.toUpperCase(java.util.Locale.ROOT);
            boolean standard = switch (dialect) {
                case POSTGRESQL -> p.equals("B") || p.equals("X") || p.equals("N");
                case MARIADB -> p.equals("B") || p.equals("X") || p.equals("N") || p.startsWith("_");
                case H2 -> p.equals("X") || p.equals("N");
            };
            if (dialect == Dialect.POSTGRESQL && p.equals("E")) {
                return literal(quote + 1, '\'', true);
            }
            if (standard) {
                return literal(quote + 1, '\'', reading.backslashEscapes());
            }
            unterminated = endOfQuoted(quote + 1, '\'', reading.backslashEscapes()) < 0;
            return false;
        }

        private static boolean isDigit(char c) {
            return c >= '0' && c <= '9';
        }

        private static boolean isNameStart(char c) {
            return Character.isLetter(c) || c == '_';
        }

        private static boolean isNamePart(char c) {
            return Character.isLetterOrDigit(c) || c == '_' || c == '$';
        }
    }
}
