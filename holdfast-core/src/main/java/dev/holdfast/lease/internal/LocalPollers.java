package dev.holdfast.lease.internal;

import org.jspecify.annotations.Nullable;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * This service's polling {@code acquire} calls (not woken by notifications) by lease name, oldest
 * first: a release through this service wakes the oldest at once, instead of at its next poll.
 */
final class LocalPollers {

    private final ConcurrentHashMap<String, ConcurrentLinkedDeque<Waiter>> byName = new ConcurrentHashMap<>();

    void add(String name, Waiter waiter) {
        byName.computeIfAbsent(name, n -> new ConcurrentLinkedDeque<>()).addLast(waiter);
    }

    void remove(String name, Waiter waiter) {
        byName.computeIfPresent(name, (n, deque) -> {
            deque.remove(waiter);
            return deque.isEmpty() ? null : deque;
        });
    }

    /** Wakes the oldest polling waiter of {@code name}, if any: the lease may be free now. */
    void wakeOldest(String name) {
        ConcurrentLinkedDeque<Waiter> deque = byName.get(name);
        Waiter oldest = deque == null ? null : deque.peekFirst();
        if (oldest != null) {
            oldest.lookNow.set(true);
            oldest.signal.release();
        }
    }

    /** The polling waiter of {@code name} with waiter id {@code id}, or null. */
    @Nullable
    Waiter find(String name, @Nullable String id) {
        ConcurrentLinkedDeque<Waiter> deque = byName.get(name);
        if (deque == null || id == null) {
            return null;
        }
        for (Waiter w : deque) {
            if (id.equals(w.id)) {
                return w;
            }
        }
        return null;
    }

    /** Wakes every polling waiter: each looks now. */
    void wakeAll() {
        byName.values()
                .forEach(deque -> deque.forEach(w -> {
                    w.lookNow.set(true);
                    w.signal.release();
                }));
    }

    /** Asks every waiter of {@code name} (every name if null) to decide again how long to wait, without looking now. */
    void nudge(@Nullable String name) {
        for (Map.Entry<String, ConcurrentLinkedDeque<Waiter>> e : byName.entrySet()) {
            if (name == null || name.equals(e.getKey())) {
                e.getValue().forEach(w -> w.signal.release());
            }
        }
    }

    /** Whether no call polls now. */
    boolean isEmpty() {
        return byName.isEmpty();
    }
}
