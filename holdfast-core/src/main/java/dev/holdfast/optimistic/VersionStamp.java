package dev.holdfast.optimistic;

import org.jspecify.annotations.Nullable;

import java.time.Instant;

/**
 * The optimistic-lock columns of one row as the database last wrote them.
 *
 * @param version    the row's version
 * @param modifiedBy who wrote it last, as the writer said ({@code null} if the column is null)
 * @param modified   when, in database time ({@code null} if the column is null)
 * @see VersionConflictException#requireVersion
 */
public record VersionStamp(
        long version, @Nullable String modifiedBy, @Nullable Instant modified) {}
