/**
 * A ShedLock {@code LockProvider} backed by Holdfast leases ({@link
 * dev.holdfast.shedlock.HoldfastLockProvider}): database time, fencing tokens, and an unlock that
 * reports an expired lock.
 */
@NullMarked
package dev.holdfast.shedlock;

import org.jspecify.annotations.NullMarked;
