package dev.holdfast.lease;

import org.jspecify.annotations.Nullable;

import java.time.Instant;

/**
 * A blocking {@link Leases#acquire} waiting in the queue of a lease, as operators see it
 * ({@link LeaseView#waiters}). Without the waiter's id, which is its wake-up key. Database time.
 *
 * @param name       the lease waited for
 * @param place      1 for the waiter the lease goes to next, 2 behind it, …
 * @param owner      the owner the lease will be granted to (PostgreSQL); null on H2 and MariaDB,
 *                   whose queue does not keep it
 * @param queuedAt   when it joined the queue (H2, MariaDB); null on PostgreSQL, whose queue keeps
 *                   an order, not a time
 * @param waitsUntil when the entry lapses unless its waiter refreshes it (a live waiter does, every
 *                   few milliseconds to seconds): not the end of the caller's wait
 */
public record LeaseWaiter(
        String name,
        int place,
        @Nullable String owner,
        @Nullable Instant queuedAt,
        Instant waitsUntil) {}
