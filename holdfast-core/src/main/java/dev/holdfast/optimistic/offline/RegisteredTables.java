package dev.holdfast.optimistic.offline;

import dev.holdfast.internal.Arguments;
import dev.holdfast.optimistic.VersionedTable;
import org.jspecify.annotations.Nullable;

import java.util.Map;

/** The tables registered with one optimistic offline lock, by name; its business transactions share them. */
final class RegisteredTables {

    private final Map<String, VersionedTable> byName;

    RegisteredTables(Map<String, VersionedTable> byName) {
        this.byName = Map.copyOf(byName);
    }

    /** The table of that name, or null if none is registered. */
    @Nullable
    VersionedTable named(String name) {
        return byName.get(name);
    }

    /** {@code table}, if it is the one registered under its name; else {@link IllegalArgumentException}. */
    VersionedTable registered(VersionedTable table) {
        Arguments.notNull(table, "table");
        if (byName.get(table.table().value()) != table) {
            throw new IllegalArgumentException(table + " is not registered with this optimistic offline lock");
        }
        return table;
    }
}
