package dev.holdfast.optimistic;

import dev.holdfast.internal.Arguments;
import org.jspecify.annotations.Nullable;

import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Optional;

/**
 * One row whose version was not the expected one: either it changed (then {@link #current()} says
 * to what, by whom and when) or it was deleted.
 *
 * @param entity          what the row is, e.g. {@code "order"} (the table name unless configured)
 * @param id              the row's key
 * @param expectedVersion the version the caller had
 * @param current         the row as it is now; {@code null} if it was deleted
 */
public record StaleRow(
        String entity,
        Object id,
        long expectedVersion,
        @Nullable VersionStamp current) {

    private static final DateTimeFormatter MINUTES =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm").withZone(ZoneOffset.UTC);

    /**
     * Creates a stale row; {@link #changed} and {@link #deleted(String, Object, long)} say which kind.
     *
     * @param entity          what the row is, e.g. {@code "order"}; not null
     * @param id              the row's key; not null
     * @param expectedVersion the version the caller had
     * @param current         the row as it is now; {@code null} if it was deleted
     * @throws IllegalArgumentException if {@code entity} or {@code id} is null
     */
    public StaleRow {
        Arguments.notNull(entity, "entity");
        Arguments.notNull(id, "id");
    }

    /**
     * A row that exists with another version than expected.
     *
     * @param entity          what the row is, e.g. {@code "order"}; not null
     * @param id              the row's key; not null
     * @param expectedVersion the version the caller had
     * @param current         the row as it is now; not null
     * @return the stale row
     * @throws IllegalArgumentException if {@code entity}, {@code id} or {@code current} is null
     */
    public static StaleRow changed(String entity, Object id, long expectedVersion, @Nullable VersionStamp current) {
        return new StaleRow(entity, id, expectedVersion, Arguments.notNull(current, "current"));
    }

    /**
     * A row that no longer exists.
     *
     * @param entity          what the row is, e.g. {@code "order"}; not null
     * @param id              the row's key; not null
     * @param expectedVersion the version the caller had
     * @return the stale row, without a {@linkplain #current() current} stamp
     * @throws IllegalArgumentException if {@code entity} or {@code id} is null
     */
    public static StaleRow deleted(String entity, Object id, long expectedVersion) {
        return new StaleRow(entity, id, expectedVersion, null);
    }

    /** {@return whether the row no longer exists (then {@link #current()} is null)} */
    public boolean deleted() {
        return current == null;
    }

    /** {@return the row's version now; empty if it was deleted} */
    public Optional<Long> currentVersion() {
        return current == null ? Optional.empty() : Optional.of(current.version());
    }

    /**
     * One sentence for people: "order 42 was modified by kim at 2026-11-21 14:03 UTC (version 7,
     * you had 6)", or "order 42 was deleted (you had version 6)". Times are database time, UTC.
     * The writer and the time are left out when their columns are null.
     *
     * @return the sentence
     */
    public String describe() {
        String row = entity + " " + id;
        VersionStamp current = this.current;
        if (current == null) {
            return row + " was deleted (you had version " + expectedVersion + ")";
        }
        StringBuilder s = new StringBuilder(row);
        s.append(current.version() > expectedVersion ? " was modified" : " was last modified");
        if (current.modifiedBy() != null) {
            s.append(" by ").append(current.modifiedBy());
        }
        if (current.modified() != null) {
            s.append(" at ").append(MINUTES.format(current.modified())).append(" UTC");
        }
        return s.append(" (version ")
                .append(current.version())
                .append(", you had ")
                .append(expectedVersion)
                .append(')')
                .toString();
    }

    @Override
    public String toString() {
        return describe();
    }
}
