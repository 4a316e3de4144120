package dev.holdfast.optimistic;

import org.jspecify.annotations.Nullable;

import java.time.Instant;

/**
 * The optimistic-lock columns of one row as the database last wrote them.
 *
 * @param version    the row's version
 * @param modifiedBy who wrote it last, as the writer said ({@code null} if the column is null)
 * @param modified   when, in database time ({@code null} if the column is null)
 */
public record VersionStamp(long version, @Nullable String modifiedBy, @Nullable Instant modified) {

    /**
     * The client-carried version check: returns normally if {@code clientVersion} is this stamp's
     * version, and otherwise refuses the request before any work is done.
     *
     * <pre>{@code
     * order.stamp().requireVersion("order", orderNo, request.version());
     * }</pre>
     *
     * @param entity what the row is, for the message (e.g. {@code "order"})
     * @param id     the row's key, for the message
     * @throws VersionConflictException if the versions differ
     */
    public void requireVersion(String entity, Object id, long clientVersion) {
        if (clientVersion != version) {
            throw new VersionConflictException(StaleRow.changed(entity, id, clientVersion, this));
        }
    }
}
