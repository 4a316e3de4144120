/**
 * Optimistic online locking with versions: {@link dev.holdfast.optimistic.VersionedTable} updates and
 * deletes a row only at the version the caller read, stamps who changed it and when (database time),
 * and explains a refusal in a {@link dev.holdfast.optimistic.VersionConflictException}: who changed
 * the row, when, and to which version.
 */
@NullMarked
package dev.holdfast.optimistic;

import org.jspecify.annotations.NullMarked;
