/**
 * Pessimistic offline locks (Fowler's Pessimistic Offline Lock) behind the {@link
 * dev.holdfast.pessimistic.offline.LockManager} interface: a lock that outlives a request, held by a
 * user while an edit page is open, identified by an unguessable {@link
 * dev.holdfast.pessimistic.offline.LockId} and checked on submit. {@link
 * dev.holdfast.pessimistic.offline.JdbcLockManager} keeps the locks in a table ({@link
 * dev.holdfast.jdbc.HoldfastTable#OFFLINE_LOCKS}), one statement per call, database time for every
 * expiry.
 */
@NullMarked
package dev.holdfast.pessimistic.offline;

import org.jspecify.annotations.NullMarked;
