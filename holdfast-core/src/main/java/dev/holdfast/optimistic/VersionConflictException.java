package dev.holdfast.optimistic;

import dev.holdfast.HoldfastException;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * A write or check found a stale version: someone changed or deleted the row since the caller
 * read it. Nothing was written by the refused operation. The exception lists every stale row (one
 * for a single-row write; all of them for an offline-lock commit); the accessors without an index
 * describe the first.
 *
 * <p>The message is for people: "order 42 was modified by kim at 2026-11-21 14:03 UTC (version 7,
 * you had 6)".
 */
public class VersionConflictException extends HoldfastException {

    /** Every stale row, in the order they were found; never empty. */
    private final List<StaleRow> staleRows;

    /**
     * Creates the exception for one stale row; its message is the row's {@link StaleRow#describe()}.
     *
     * @param staleRow the stale row; not null
     */
    public VersionConflictException(StaleRow staleRow) {
        this(List.of(staleRow));
    }

    /**
     * Creates the exception for one or more stale rows; the message describes each.
     *
     * @param staleRows every stale row, in the order they were found; not empty, without null elements
     * @throws IllegalArgumentException if {@code staleRows} is null or empty
     */
    public VersionConflictException(List<StaleRow> staleRows) {
        super(message(staleRows));
        this.staleRows = List.copyOf(staleRows);
    }

    /**
     * The client-carried version check: returns normally if {@code clientVersion} is the version of
     * {@code current}, and otherwise refuses the request before any work is done.
     *
     * <pre>{@code
     * VersionConflictException.requireVersion(order.stamp(), "order", orderNo, request.version());
     * }</pre>
     *
     * @param current       the row's stamp, as read now; not null
     * @param entity        what the row is, for the message (e.g. {@code "order"}); not null
     * @param id            the row's key, for the message; not null
     * @param clientVersion the version the client says it had
     * @throws VersionConflictException if the versions differ
     */
    public static void requireVersion(VersionStamp current, String entity, Object id, long clientVersion) {
        if (clientVersion != current.version()) {
            throw new VersionConflictException(StaleRow.changed(entity, id, clientVersion, current));
        }
    }

    private static String message(List<StaleRow> rows) {
        if (rows == null || rows.isEmpty()) {
            throw new IllegalArgumentException("a version conflict needs at least one stale row");
        }
        if (rows.size() == 1) {
            return rows.get(0).describe();
        }
        return rows.size() + " stale rows: "
                + rows.stream().map(StaleRow::describe).collect(Collectors.joining("; "));
    }

    /** {@return every stale row, in the order they were found; never empty} */
    public List<StaleRow> staleRows() {
        return staleRows;
    }

    private StaleRow first() {
        return staleRows.get(0);
    }

    /** {@return the first stale row's entity, e.g. {@code "order"}} */
    public String entity() {
        return first().entity();
    }

    /** {@return the first stale row's key} */
    public Object id() {
        return first().id();
    }

    /** {@return the version the caller had for the first stale row} */
    public long expectedVersion() {
        return first().expectedVersion();
    }

    /** {@return whether the first stale row was deleted} */
    public boolean deleted() {
        return first().deleted();
    }

    /** {@return the first stale row's current version; empty if it was deleted} */
    public Optional<Long> currentVersion() {
        return first().currentVersion();
    }

    /** {@return who last modified the first stale row; empty if it was deleted or the column is null} */
    public Optional<String> modifiedBy() {
        VersionStamp current = first().current();
        return current == null ? Optional.empty() : Optional.ofNullable(current.modifiedBy());
    }

    /**
     * {@return when (database time) the first stale row was last modified; empty if it was deleted or the
     * column is null}
     */
    public Optional<Instant> modified() {
        VersionStamp current = first().current();
        return current == null ? Optional.empty() : Optional.ofNullable(current.modified());
    }
}
