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

    /** No column changes: the update only increments the version (a forced increment). */
    public static Assignments none() {
        return NONE;
    }

    /**
     * One column and its new value ({@code null} stores NULL).
     *
     * @throws IllegalArgumentException if {@code column} is not a plain unqualified identifier
     */
    public static Assignments of(String column, Object value) {
        return NONE.and(column, value);
    }

    /**
     * These assignments plus one more.
     *
     * @throws IllegalArgumentException if {@code column} is not a plain identifier or is already assigned
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

    /** The columns, in order. */
    public List<SqlIdentifier> columns() {
        return List.copyOf(values.keySet());
    }

    /** The values, in the order of {@link #columns()}; may contain nulls. */
    public List<Object> values() {
        return Collections.unmodifiableList(new ArrayList<>(values.values()));
    }

    public boolean isEmpty() {
        return values.isEmpty();
    }

    @Override
    public String toString() {
        return values.keySet().toString();
    }
}
