package dev.holdfast.jdbc;

import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * A table or column name that is safe to place in SQL text: a plain, unquoted identifier
 * ({@code [A-Za-z_][A-Za-z0-9_]*}, at most {@value #MAX_LENGTH} characters, the PostgreSQL limit),
 * optionally qualified by one schema name of the same form. Anything else, including quotes,
 * spaces, comments and reserved words, is rejected before any SQL is built.
 *
 * @param value the identifier exactly as given
 */
public record SqlIdentifier(String value) {

    /** PostgreSQL truncates longer names silently; MariaDB allows 64. */
    public static final int MAX_LENGTH = 63;

    // Words that cannot be used unquoted on at least one supported database.
    private static final Set<String> RESERVED = Set.of(
            "ALL",
            "AND",
            "ANY",
            "AS",
            "ASC",
            "BETWEEN",
            "BY",
            "CASE",
            "CHECK",
            "COLUMN",
            "CONSTRAINT",
            "CREATE",
            "CROSS",
            "CURRENT_DATE",
            "CURRENT_TIME",
            "CURRENT_TIMESTAMP",
            "CURRENT_USER",
            "DEFAULT",
            "DELETE",
            "DESC",
            "DISTINCT",
            "DROP",
            "ELSE",
            "END",
            "EXCEPT",
            "EXISTS",
            "FALSE",
            "FETCH",
            "FOR",
            "FOREIGN",
            "FROM",
            "FULL",
            "GRANT",
            "GROUP",
            "HAVING",
            "IF",
            "IN",
            "INNER",
            "INSERT",
            "INTERSECT",
            "INTERVAL",
            "INTO",
            "IS",
            "JOIN",
            "KEY",
            "LEFT",
            "LIKE",
            "LIMIT",
            "NOT",
            "NULL",
            "OFFSET",
            "ON",
            "OR",
            "ORDER",
            "OUTER",
            "PRIMARY",
            "REFERENCES",
            "RIGHT",
            "ROW",
            "ROWS",
            "SELECT",
            "SET",
            "TABLE",
            "THEN",
            "TO",
            "TRUE",
            "UNION",
            "UNIQUE",
            "UPDATE",
            "USER",
            "USING",
            "VALUES",
            "WHEN",
            "WHERE",
            "WITH");

    private static final int LONGEST_RESERVED =
            RESERVED.stream().mapToInt(String::length).max().orElse(0);

    /**
     * Validates {@code value}; see the class description for the rules.
     *
     * @param value the identifier, {@code name} or {@code schema.name}
     * @throws IllegalArgumentException if {@code value} is null or not a plain identifier
     */
    public SqlIdentifier {
        if (value == null) {
            throw new IllegalArgumentException("SQL identifier must not be null");
        }
        int dot = value.indexOf('.');
        if (dot >= 0 && value.indexOf('.', dot + 1) >= 0) {
            throw invalid(value, "at most one '.' (schema.name) is allowed");
        }
        if (dot >= 0) {
            checkPart(value, 0, dot);
            checkPart(value, dot + 1, value.length());
        } else {
            checkPart(value, 0, value.length());
        }
    }

    // A character loop, not a regex: identifiers are validated on hot paths (every Assignments column).
    private static void checkPart(String value, int from, int to) {
        int length = to - from;
        if (length == 0 || length > MAX_LENGTH) {
            throw invalid(value, "each part must have 1 to " + MAX_LENGTH + " characters");
        }
        for (int i = from; i < to; i++) {
            char c = value.charAt(i);
            boolean letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
            if (!letter && !(i > from && c >= '0' && c <= '9')) {
                throw invalid(value, "only letters, digits and '_' are allowed, not starting with a digit");
            }
        }
        if (length <= LONGEST_RESERVED
                && RESERVED.contains(value.substring(from, to).toUpperCase(Locale.ROOT))) {
            throw invalid(value, "'" + value.substring(from, to) + "' is a reserved word");
        }
    }

    /**
     * Validates {@code value}; see the class description for the rules.
     *
     * @param value the identifier, {@code name} or {@code schema.name}
     * @return the validated identifier
     * @throws IllegalArgumentException if {@code value} is null or not a plain identifier
     */
    public static SqlIdentifier of(String value) {
        return new SqlIdentifier(value);
    }

    /**
     * Validates {@code value} and requires it to be unqualified (no schema part).
     *
     * @param value the identifier, {@code name} without a schema
     * @return the validated identifier
     * @throws IllegalArgumentException if {@code value} is null, not a plain identifier, or schema-qualified
     */
    public static SqlIdentifier unqualified(String value) {
        SqlIdentifier id = new SqlIdentifier(value);
        if (id.isQualified()) {
            throw invalid(value, "a schema-qualified name is not allowed here");
        }
        return id;
    }

    /** {@return whether the identifier has a schema part ({@code schema.name})} */
    public boolean isQualified() {
        return value.indexOf('.') >= 0;
    }

    private static IllegalArgumentException invalid(String value, String why) {
        return new IllegalArgumentException("Not a plain SQL identifier: '" + printable(value) + "' (" + why + ")");
    }

    private static String printable(String value) {
        String shown = value.length() > 80 ? value.substring(0, 80) + "…" : value;
        return shown.chars().allMatch(c -> c >= 0x20 && c < 0x7f)
                ? shown
                : Objects.toString(shown.codePoints()
                        .mapToObj(c -> c >= 0x20 && c < 0x7f ? Character.toString(c) : String.format("\\u%04x", c))
                        .reduce("", String::concat));
    }

    @Override
    public String toString() {
        return value;
    }
}
