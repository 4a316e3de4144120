package dev.holdfast.lease.internal;

/**
 * MariaDB: a queue entry as a release read it ({@link MariaDbLeaseSql#firstWaiterSql}): what a hand-off grants it,
 * the wake-up connection to wake, and its place, by which the hand-off checks that it still comes first.
 */
record QueuedWaiter(String waiter, String leaseOwner, long ttlMicros, long listener, String place) {}
