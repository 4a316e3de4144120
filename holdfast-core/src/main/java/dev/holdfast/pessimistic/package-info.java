/**
 * Pessimistic online locks: row locks taken inside the caller's transaction with a wait bound that
 * holds on every database ({@link dev.holdfast.pessimistic.PessimisticLocks}, {@link
 * dev.holdfast.pessimistic.LockWait}), several rows in one global order so that two callers cannot
 * deadlock, and typed failures ({@link dev.holdfast.pessimistic.LockTimeoutException}, {@link
 * dev.holdfast.pessimistic.DeadlockException}) that roll the transaction back.
 */
@NullMarked
package dev.holdfast.pessimistic;

import org.jspecify.annotations.NullMarked;
