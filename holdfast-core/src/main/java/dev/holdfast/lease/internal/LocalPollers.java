package dev.holdfast.lease.internal;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * This service's polling {@code lock} calls (not woken by notifications) by lease name, oldest
 * first: a release through this service wakes the oldest at once, instead of at its next poll.
 */
final class LocalPollers {

    private final ConcurrentHashMap<String, ConcurrentLinkedDeque<PgWakeUps.Waiter>> byName = new ConcurrentHashMap<>();

    void add(String name, PgWakeUps.Waiter waiter) {
        byName.computeIfAbsent(name, n -> new ConcurrentLinkedDeque<>()).addLast(waiter);
    }

    void remove(String name, PgWakeUps.Waiter waiter) {
        byName.computeIfPresent(name, (n, deque) -> {
            deque.remove(waiter);
            return deque.isEmpty() ? null : deque;
        });
    }

    /** Wakes the oldest polling waiter of {@code name}, if any: the lease may be free now. */
    void wakeOldest(String name) {
        ConcurrentLinkedDeque<PgWakeUps.Waiter> deque = byName.get(name);
        PgWakeUps.Waiter oldest = deque == null ? null : deque.peekFirst();
        if (oldest != null) {
            oldest.signal.release();
        }
    }
}
