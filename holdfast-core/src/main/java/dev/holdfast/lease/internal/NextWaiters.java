package dev.holdfast.lease.internal;

import org.jspecify.annotations.Nullable;

import java.util.concurrent.ConcurrentHashMap;

/**
 * MariaDB: for a lease just handed to this service, the waiter its release will hand it to, read by the wake-up
 * connection right after the grant ({@link MariaDbHandOff#nextWaiter}), so that the release skips that read. A hint
 * only, bounded: the hand-off's own update checks that the waiter is still the first, and without a hint the
 * release reads the queue itself.
 */
final class NextWaiters {

    /** How many names are remembered at most; past that, all are forgotten at once. */
    static final int MAX_NAMES = 4096;

    private record Next(long token, QueuedWaiter waiter) {}

    private final ConcurrentHashMap<String, Next> byName = new ConcurrentHashMap<>();

    /** Records {@code waiter} as the next one after grant {@code token} of {@code name}. */
    void put(String name, long token, QueuedWaiter waiter) {
        if (byName.size() >= MAX_NAMES) {
            byName.clear();
        }
        byName.put(name, new Next(token, waiter));
    }

    /** Takes the next waiter recorded for {@code name}, if it was read after the grant {@code token} (any if null). */
    @Nullable
    QueuedWaiter take(String name, @Nullable Long token) {
        Next next = byName.remove(name);
        return next != null && (token == null || next.token() == token) ? next.waiter() : null;
    }
}
