package dev.holdfast.jdbc;

import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

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

    private static final Pattern PART = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    // Words that cannot be used unquoted on at least one supported database.
    private static final Set<String> RESERVED = Set.of(
            "ALL", "AND", "ANY", "AS", "ASC", "BETWEEN", "BY", "CASE", "CHECK", "COLUMN", "CONSTRAINT",
            "CREATE", "CROSS", "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP", "CURRENT_USER",
            "DEFAULT", "DELETE", "DESC", "DISTINCT", "DROP", "ELSE", "END", "EXCEPT", "EXISTS", "FALSE",
            "FETCH", "FOR", "FOREIGN", "FROM", "FULL", "GRANT", "GROUP", "HAVING", "IF", "IN", "INNER",
            "INSERT", "INTERSECT", "INTERVAL", "INTO", "IS", "JOIN", "KEY", "LEFT", "LIKE", "LIMIT", "NOT",
            "NULL", "OFFSET", "ON", "OR", "ORDER", "OUTER", "PRIMARY", "REFERENCES", "RIGHT", "ROW", "ROWS",
            "SELECT", "SET", "TABLE", "THEN", "TO", "TRUE", "UNION", "UNIQUE", "UPDATE", "USER", "USING",
            "VALUES", "WHEN", "WHERE", "WITH");

    /**
     * @throws IllegalArgumentException if {@code value} is null or not a plain identifier
     */
    public SqlIdentifier {
        if (value == null) {
            throw new IllegalArgumentException("SQL identifier must not be null");
        }
        String[] parts = value.split("\\.", -1);
        if (parts.length > 2) {
            throw invalid(value, "at most one '.' (schema.name) is allowed");
        }
        for (String part : parts) {
            if (part.isEmpty() || part.length() > MAX_LENGTH) {
                throw invalid(value, "each part must have 1 to " + MAX_LENGTH + " characters");
            }
            if (!PART.matcher(part).matches()) {
                throw invalid(value, "only letters, digits and '_' are allowed, not starting with a digit");
            }
            if (RESERVED.contains(part.toUpperCase(Locale.ROOT))) {
                throw invalid(value, "'" + part + "' is a reserved word");
            }
        }
    }

    /** Validates {@code value}; see the class description for the rules. */
    public static SqlIdentifier of(String value) {
        return new SqlIdentifier(value);
    }

    /** Validates {@code value} and requires it to be unqualified (no schema part). */
    public static SqlIdentifier unqualified(String value) {
        SqlIdentifier id = new SqlIdentifier(value);
        if (id.isQualified()) {
            throw invalid(value, "a schema-qualified name is not allowed here");
        }
        return id;
    }

    /** Whether the identifier has a schema part. */
    public boolean isQualified() {
        return value.indexOf('.') >= 0;
    }

    private static IllegalArgumentException invalid(String value, String why) {
        return new IllegalArgumentException("Not a plain SQL identifier: '"
                + printable(value) + "' (" + why + ")");
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
