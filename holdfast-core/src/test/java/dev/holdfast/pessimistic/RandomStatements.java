package dev.holdfast.pessimistic;

import dev.holdfast.jdbc.dialect.Dialect;
import org.jspecify.annotations.Nullable;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Random {@code SELECT} statements made of every lexical form of one database: strings in each of its
 * forms, numbers in each of theirs, comments of each kind (with quotes, backslashes and comment markers
 * inside), quoted and plain names. Every string, number and comment holds a secret: lower-case letters
 * and digits, which nothing else in a statement uses (prefixes such as {@code E'…'} are upper case, so
 * that a statement cut before the quote shows no lower-case word). Each statement knows what the database returns
 * for it (checked against the servers by {@code StatementTextDatabaseTest}) and what
 * {@link StatementText} must show of it.
 */
final class RandomStatements {

    /** A session setting of one database that changes how its text is read. */
    record Setting(Dialect dialect, boolean backslashEscapes, boolean ansiQuotes) {

        static List<Setting> of(Dialect dialect) {
            return switch (dialect) {
                case H2 -> List.of(new Setting(dialect, false, false));
                case POSTGRESQL -> List.of(new Setting(dialect, false, false), new Setting(dialect, true, false));
                case MARIADB ->
                    List.of(
                            new Setting(dialect, true, false),
                            new Setting(dialect, false, false),
                            new Setting(dialect, true, true),
                            new Setting(dialect, false, true));
            };
        }

        /** The statements that put a session into this setting (after {@link #reset()}). */
        List<String> apply() {
            return switch (dialect) {
                case H2 -> List.of();
                case POSTGRESQL -> List.of("SET standard_conforming_strings = " + (backslashEscapes ? "off" : "on"));
                case MARIADB -> List.of("SET SESSION sql_mode = '" + String.join(",", modes()) + "'");
            };
        }

        private List<String> modes() {
            List<String> modes = new ArrayList<>(List.of("STRICT_TRANS_TABLES"));
            if (!backslashEscapes) {
                modes.add("NO_BACKSLASH_ESCAPES");
            }
            if (ansiQuotes) {
                modes.add("ANSI_QUOTES");
            }
            return modes;
        }
    }

    /**
     * One column of the result.
     *
     * @param value a {@link String}, a {@link BigDecimal} (compared by value), a {@link Double}
     *              (compared within 1e-9), or null: not compared
     */
    record Column(String label, @Nullable Object value) {}

    /**
     * @param shown     what {@link StatementText} shows of the whole statement, read by its setting
     * @param ambiguous another setting reads it otherwise: only a beginning of {@code shown} may be shown
     */
    record Statement(Setting setting, String sql, String shown, List<Column> columns, boolean ambiguous) {
        @Override
        public String toString() {
            return setting + (ambiguous ? " ambiguous" : "") + ": "
                    + sql.replace("\r", "\\r").replace("\n", "\\n");
        }
    }

    /**
     * What literals and comments are made of. No semicolon: pgjdbc splits a text into statements at one
     * outside what its own lexer takes for comments, and it ends {@code /*}{@code /} where the server
     * does not.
     */
    private static final String TEXT = "abcdefghijklmnopqrstuvwxyz0123456789    '\"`\\$-#/*?:.,()={}\n!";

    private final Setting setting;
    private final Dialect dialect;
    private final Random random;
    private final StringBuilder sql = new StringBuilder();
    private final StringBuilder shown = new StringBuilder();
    private final List<Column> columns = new ArrayList<>();
    private boolean space;
    private boolean ambiguous;
    /** Inside a versioned comment that the server does not run: it ends at the first {@code *}{@code /}. */
    private boolean skippedComment;

    private RandomStatements(Setting setting, Random random) {
        this.setting = setting;
        this.dialect = setting.dialect();
        this.random = random;
    }

    static Statement next(Setting setting, Random random) {
        return new RandomStatements(setting, random).statement();
    }

    private Statement statement() {
        word("SELECT", "SELECT");
        int items = 1 + random.nextInt(5);
        for (int k = 0; k < items; k++) {
            if (k > 0) {
                word(",", ",");
            }
            gap(true);
            item(true);
            if (dialect == Dialect.MARIADB && chance(15)) {
                gap(true);
                executableComment();
            }
        }
        if (chance(30)) {
            gap(true);
        }
        if (chance(15)) {
            lineCommentAtTheEnd();
        }
        return new Statement(setting, sql.toString(), shown.toString(), List.copyOf(columns), ambiguous);
    }

    private boolean chance(int percent) {
        return random.nextInt(100) < percent;
    }

    /** Appends {@code text} to the statement and {@code seen} to what is shown of it. */
    private void word(String text, String seen) {
        sql.append(text);
        if (!seen.isEmpty()) {
            if (space && shown.length() > 0) {
                shown.append(' ');
            }
            space = false;
            shown.append(seen);
        }
    }

    /** Whitespace and comments, at least one whitespace character when {@code required}. */
    private void gap(boolean required) {
        if (required) {
            sql.append(pick(" ", " ", "\n", "\t", "\r\n", "  "));
        }
        int parts = random.nextInt(3);
        for (int p = 0; p < parts; p++) {
            switch (random.nextInt(4)) {
                case 0 -> sql.append(pick(" ", "\n", "\t"));
                case 1 -> sql.append("/*").append(commentText()).append("*/");
                case 2 -> lineComment();
                default -> {
                    if (dialect == Dialect.MARIADB) {
                        sql.append("/*")
                                .append(commentText())
                                .append("/*")
                                .append(commentText())
                                .append("*/");
                    } else {
                        sql.append("/*")
                                .append(commentText())
                                .append("/*")
                                .append(commentText())
                                .append("*/")
                                .append(commentText())
                                .append("*/");
                    }
                }
            }
            sql.append(' ');
        }
        space = true;
    }

    private void lineComment() {
        String start = switch (dialect) {
            case POSTGRESQL -> "--";
            case H2 -> pick("--", "//");
            case MARIADB -> pick("-- ", "--\t", "#");
        };
        sql.append(start).append(lineText());
        sql.append(dialect == Dialect.MARIADB ? "\n" : pick("\n", "\r\n", "\r"));
        space = true;
    }

    private void lineCommentAtTheEnd() {
        sql.append(' ').append(dialect == Dialect.MARIADB ? "# " : "-- ").append(lineText());
        space = true;
    }

    /** A line comment's text: MariaDB ends one at a line feed only, the others at a carriage return too. */
    private String lineText() {
        String text = text(random.nextInt(20)).replace("\n", " ");
        return dialect == Dialect.MARIADB ? text.replace(" ", pick(" ", "\r")) : text;
    }

    /** A block comment's text: no end in it, no start either (PostgreSQL and H2 nest comments). */
    private String commentText() {
        StringBuilder t = new StringBuilder(text(random.nextInt(25)));
        for (int k = t.indexOf("*/"); k >= 0; k = t.indexOf("*/")) {
            t.setCharAt(k, 'x');
        }
        for (int k = t.indexOf("/*"); k >= 0; k = t.indexOf("/*")) {
            t.setCharAt(k, 'y');
        }
        // nor a marker at its ends, where it would meet the delimiters: /**/, a MariaDB /*!, and not
        // empty: pgjdbc's own lexer ends /*/* at its /*/ (unlike the server) and then reads the rest otherwise
        if (t.length() == 0 || "*/!".indexOf(t.charAt(0)) >= 0) {
            t.insert(0, ' ');
        }
        if (t.length() > 0 && "*/".indexOf(t.charAt(t.length() - 1)) >= 0) {
            t.append(' ');
        }
        return t.toString();
    }

    private String text(int length) {
        StringBuilder t = new StringBuilder(length);
        for (int k = 0; k < length; k++) {
            t.append(TEXT.charAt(random.nextInt(TEXT.length())));
        }
        if (chance(10)) {
            t.append(" {1: ");
        }
        String text = t.toString();
        // MariaDB refuses a comment start inside a versioned comment it does not run
        while (skippedComment && (text.contains("*/") || text.contains("/*"))) {
            text = text.replace("*/", "*").replace("/*", "/");
        }
        return text;
    }

    /** A select item, {@code <literal> AS <alias>}; comments between its tokens when {@code comments}. */
    private void item(boolean comments) {
        Object value = literal();
        separation(comments);
        word("AS", "AS");
        separation(comments);
        columns.add(new Column(alias(), value));
    }

    private void separation(boolean comments) {
        if (comments) {
            gap(true);
        } else {
            sql.append(pick(" ", "\n", "  "));
            space = true;
        }
    }

    /** An alias, plain or quoted; returns the label the database gives the column. */
    private String alias() {
        StringBuilder name = new StringBuilder("Q");
        for (int k = random.nextInt(6); k >= 0; k--) {
            name.append((char) ('A' + random.nextInt(26)));
        }
        String label = name.toString();
        switch (random.nextInt(3)) {
            case 0 -> word(label, label);
            case 1 -> {
                label = label + (chance(50) ? " X" : "") + (chance(50) ? "\"" : "");
                String quoted = '"' + label.replace("\"", "\"\"") + '"';
                word(quoted, dialect == Dialect.MARIADB ? "?" : quoted);
            }
            default -> {
                if (dialect == Dialect.POSTGRESQL) {
                    word(label, label);
                } else {
                    label = label + (chance(50) ? " Y" : "") + (chance(50) ? "`" : "");
                    String quoted = '`' + label.replace("`", "``") + '`';
                    word(quoted, quoted);
                }
            }
        }
        return label;
    }

    /** A literal of one of the database's forms; returns its value (null: not compared). */
    private @Nullable Object literal() {
        int forms = dialect == Dialect.MARIADB ? 3 : 2;
        return switch (random.nextInt(forms)) {
            case 0 -> string();
            case 1 -> number();
            default -> {
                long a = 1 + random.nextInt(99_999);
                long b = 1 + random.nextInt(99_999);
                word(a + "--" + b, "?--?"); // MariaDB: minus minus, no comment without a space after --
                yield BigDecimal.valueOf(a + b);
            }
        };
    }

    private @Nullable Object number() {
        boolean negative = chance(20);
        if (negative) {
            word("-", "-");
        }
        String text;
        Object value;
        int form = random.nextInt(dialect == Dialect.POSTGRESQL ? 4 : 5);
        switch (form) {
            case 0 -> {
                text = digits(1 + random.nextInt(12));
                value = new BigDecimal(text);
            }
            case 1 -> {
                text = pick(
                        digits(1 + random.nextInt(6)) + "." + digits(1 + random.nextInt(6)),
                        "." + digits(1 + random.nextInt(6)),
                        digits(1 + random.nextInt(6)) + ".");
                value = new BigDecimal(text);
            }
            case 2, 3 -> {
                text = digits(1 + random.nextInt(4))
                        + (chance(50) ? "." + digits(1 + random.nextInt(3)) : "")
                        + pick("e", "E")
                        + pick("", "+", "-")
                        + (1 + random.nextInt(5));
                value = Double.valueOf(text);
            }
            default -> {
                text = switch (dialect) {
                    case MARIADB -> pick("0x" + hex(1 + random.nextInt(6)), "0b" + bits());
                    case H2 ->
                        pick(
                                "0x" + hex(1 + random.nextInt(6)),
                                "0b" + bits(),
                                "0o" + (1 + random.nextInt(7)),
                                digits(1 + random.nextInt(3)) + "_" + digits(3).replace('0', '1'));
                    case POSTGRESQL -> throw new AssertionError("no radix form");
                };
                value = null;
            }
        }
        word(text, "?");
        if (value instanceof BigDecimal d && negative) {
            return d.negate();
        }
        if (value instanceof Double d && negative) {
            return -d;
        }
        return value;
    }

    private String digits(int length) {
        StringBuilder d = new StringBuilder().append((char) ('1' + random.nextInt(9)));
        for (int k = 1; k < length; k++) {
            d.append((char) ('0' + random.nextInt(10)));
        }
        return d.toString();
    }

    private String hex(int length) {
        StringBuilder h = new StringBuilder();
        for (int k = 0; k < length * 2; k++) {
            h.append("0123456789abcdef".charAt(random.nextInt(16)));
        }
        return h.toString();
    }

    private String bits() {
        StringBuilder b = new StringBuilder("1");
        for (int k = random.nextInt(12); k >= 0; k--) {
            b.append(random.nextBoolean() ? '1' : '0');
        }
        return b.toString();
    }

    /** A string in one of the database's forms; returns its value (null: not compared). */
    private @Nullable Object string() {
        String content = text(random.nextInt(30));
        boolean backslash = setting.backslashEscapes();
        return switch (dialect) {
            case POSTGRESQL ->
                switch (random.nextInt(6)) {
                    case 0 -> plain("", content, backslash);
                    case 1 -> escaped("E", content);
                    case 2 -> backslash ? plain("", content, true) : unicode(content);
                    case 3 -> dollar(content);
                    case 4 -> {
                        plain("N", content, backslash);
                        yield null; // character(n): padded or not, by the driver
                    }
                    default -> {
                        word(pick("X'" + hex(2) + "'", "B'" + bits() + "'"), "?");
                        yield null;
                    }
                };
            case MARIADB ->
                switch (random.nextInt(setting.ansiQuotes() ? 4 : 5)) {
                    case 0 -> plain("", content, backslash);
                    case 1 -> plain(pick("N", "_ASCII", "_BINARY"), content, backslash);
                    case 2 -> {
                        word(pick("X'" + hex(2) + "'", "X'" + hex(1) + "'", "B'" + bits() + "'"), "?");
                        yield null;
                    }
                    case 3 -> plain("", content, backslash);
                    default -> quoted('"', "", content, backslash);
                };
            case H2 ->
                switch (random.nextInt(5)) {
                    case 0, 1 -> plain(pick("", "", "N"), content, false);
                    case 2 -> unicode(content);
                    case 3 -> dollar(content);
                    default -> {
                        word("X'" + hex(2) + "'", "?");
                        yield null;
                    }
                };
        };
    }

    private String plain(String prefix, String content, boolean backslash) {
        return quoted('\'', prefix, content, backslash);
    }

    /** {@code prefix'content'}, a quote doubled or (with backslash escapes) escaped, a backslash escaped. */
    private String quoted(char quote, String prefix, String content, boolean backslash) {
        StringBuilder s = new StringBuilder(prefix).append(quote);
        for (char c : content.toCharArray()) {
            if (c == quote) {
                s.append(backslash && chance(50) ? "\\" + quote : "" + quote + quote);
            } else if (c == '\\') {
                s.append(backslash ? "\\\\" : "\\");
            } else {
                s.append(c);
            }
        }
        String text = s.append(quote).toString();
        if (text.indexOf('\\') >= 0 && dialect != Dialect.H2) {
            ambiguous = true; // read with the other backslash rule, it ends elsewhere
        }
        word(text, "?");
        return content;
    }

    private String escaped(String prefix, String content) {
        StringBuilder s = new StringBuilder(prefix).append('\'');
        for (char c : content.toCharArray()) {
            s.append(c == '\'' ? pick("\\'", "''") : c == '\\' ? "\\\\" : String.valueOf(c));
        }
        word(s.append('\'').toString(), "?");
        return content;
    }

    private String unicode(String content) {
        word("U&'" + content.replace("\\", "\\\\").replace("'", "''") + "'", "?");
        return content;
    }

    private String dollar(String content) {
        String tag = dialect == Dialect.POSTGRESQL ? pick("$$", "$q$", "$Tag_1$", "$x$") : "$$";
        String text = content;
        while ((text + tag).indexOf(tag) != text.length()) {
            text = text.replace("$", "");
        }
        word(tag + text + tag, "?");
        return text;
    }

    /** MariaDB's {@code /*! , <literal> AS <alias> *}{@code /}, with or without a version. */
    private void executableComment() {
        int kind = random.nextInt(3);
        if (kind == 0) {
            String marker = pick("/*!", "/*M!");
            word(marker, marker);
            executableContent();
            word("*/", "*/");
            return;
        }
        // with a version it runs only on a server at least that new, and is shown in no case
        boolean runs = kind == 1;
        int start = sql.length();
        int shownLength = shown.length();
        int columnCount = columns.size();
        sql.append(runs ? pick("/*!50001", "/*M!100100") : "/*M!999999");
        skippedComment = !runs;
        executableContent();
        skippedComment = false;
        sql.append("*/");
        shown.setLength(shownLength);
        space = true;
        if (!runs) {
            columns.subList(columnCount, columns.size()).clear();
        }
        if (sql.substring(start, sql.length() - 2).contains("*/")) {
            ambiguous = true; // a server that does not run it ends it at the first */
        }
    }

    private void executableContent() {
        separation(false);
        word(",", ",");
        separation(false);
        item(false);
        separation(false);
    }

    @SafeVarargs
    private <T> T pick(T... choices) {
        return choices[random.nextInt(choices.length)];
    }
}
