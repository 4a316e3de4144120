package dev.holdfast.optimistic;

import dev.holdfast.jdbc.SqlIdentifier;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The caller's part of a versioned update: columns and the values to store in them, in order.
 * Column names must be plain identifiers; values are always bound as parameters, never placed in
 * the SQL text. Immutable; {@link #and} returns a new instance.
 *
 * <pre>{@code
 * Assignments.of("street", "Main 1").and("city", "Bern")
 * }</pre>
 */
public final class Assignments {

    private static final Assignments NONE = new Assignments(Map.of());

    private final Map<SqlIdentifier, Object> values;

    private Assignments(Map<SqlIdentifier, Object> values) {
        this.values = values;
    }

    /**
     * {@return no column changes: an update with them only increments the version (a forced increment)}
     */
    public static Assignments none() {
        return NONE;
    }

    /**
     * One column and its new value ({@code null} stores NULL).
     *
     * @param column the column's name, a plain unqualified identifier (see {@link SqlIdentifier})
     * @param value  the value to store, bound as a parameter with {@code PreparedStatement.setObject}, so of a
     *               type the driver accepts; null stores NULL
     * @return assignments of this one column
     * @throws IllegalArgumentException if {@code column} is null or not a plain unqualified identifier
     */
    public static Assignments of(String column, Object value) {
        return NONE.and(column, value);
    }

    /**
     * These assignments plus one more, assigned last; this instance stays as it is.
     *
     * @param column the column's name, a plain unqualified identifier (see {@link SqlIdentifier})
     * @param value  the value to store, as {@link #of(String, Object)} takes it; null stores NULL
     * @return new assignments with {@code column} added at the end
     * @throws IllegalArgumentException if {@code column} is null, not a plain unqualified identifier, or already
     *                                  assigned (compared without regard to case)
     */
    public Assignments and(String column, Object value) {
        SqlIdentifier id = SqlIdentifier.unqualified(column);
        for (SqlIdentifier existing : values.keySet()) {
            if (existing.value().equalsIgnoreCase(id.value())) {
                throw new IllegalArgumentException("column '" + column + "' is assigned twice");
            }
        }
        Map<SqlIdentifier, Object> copy = new LinkedHashMap<>(values);
        copy.put(id, value);
        return new Assignments(Collections.unmodifiableMap(copy));
    }

    /** {@return the columns, in the order they were assigned; an unmodifiable list} */
    public List<SqlIdentifier> columns() {
        return List.copyOf(values.keySet());
    }

    /** {@return the values, in the order of {@link #columns()}; an unmodifiable list that may contain nulls} */
    public List<Object> values() {
        return Collections.unmodifiableList(new ArrayList<>(values.values()));
    }

    /** {@return whether no column is assigned, as in {@link #none()}} */
    public boolean isEmpty() {
        return values.isEmpty();
    }

    @Override
    public String toString() {
        return values.keySet().toString();
    }
}
