package dev.holdfast.lease.internal;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The names whose last release by this service found waiters: their next release goes straight to the
 * statement that hands the lease on. A hint only, bounded: forgetting a name costs its next release a
 * round trip, never a hand-off.
 */
final class ContendedNames {

    /** How many names are remembered at most; past that, all are forgotten at once. */
    static final int MAX_NAMES = 4096;

    private final Set<String> names = ConcurrentHashMap.newKeySet();

    boolean contains(String name) {
        return names.contains(name);
    }

    /** Records what {@code name}'s release found: waiters or none. */
    void found(String name, boolean waiters) {
        if (!waiters) {
            names.remove(name);
            return;
        }
        if (names.contains(name)) {
            return;
        }
        if (names.size() >= MAX_NAMES) {
            names.clear();
        }
        names.add(name);
    }
}
