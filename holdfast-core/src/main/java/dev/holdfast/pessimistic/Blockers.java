package dev.holdfast.pessimistic;

import org.jspecify.annotations.Nullable;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Who blocked a row lock whose bound ran out ({@link LockTimeoutException#blockers()}): the
 * sessions the database named while the lock waited, or why they are unknown.
 *
 * <p>Known blockers are the sessions the waiting session waited for directly and, in a chain, the
 * sessions those waited for in turn (A blocks B blocks the caller: B, then A with
 * {@link Blocker#blocks()} = B), nearest first, at most {@value #MAX_SESSIONS}; {@link #omitted()}
 * counts the rest. A chain is followed {@value #MAX_DEPTH} links deep.
 *
 * @param waitingSession the id of the session that waited (the caller's); null when unknown
 * @param sessions       the blockers, nearest first, then by session id: not empty when known,
 *                       empty when unknown
 * @param omitted        how many more blockers the database named than {@code sessions} holds
 * @param unknownBecause null when the blockers are known; else why they are not
 */
public record Blockers(
        @Nullable String waitingSession,
        List<Blocker> sessions,
        int omitted,
        @Nullable String unknownBecause) {

    /** The most blockers kept; {@link #omitted()} counts the rest. */
    public static final int MAX_SESSIONS = 10;

    /** How many links of a chain of waits are followed from the waiting session. */
    public static final int MAX_DEPTH = 5;

    /**
     * Checks that the parts agree with each other and copies {@code sessions}.
     *
     * @param waitingSession the id of the session that waited; not null when the blockers are known
     * @param sessions       the blockers, nearest first; not null, without null elements, at most
     *                       {@value #MAX_SESSIONS}; empty exactly when the blockers are unknown
     * @param omitted        how many more blockers there were; not negative, zero when unknown
     * @param unknownBecause null when the blockers are known; else why they are not, not blank
     * @throws IllegalArgumentException if the parts contradict each other: known blockers without a
     *                                  waiting session or sessions, more than {@value #MAX_SESSIONS}
     *                                  sessions, a negative {@code omitted}, or unknown blockers with
     *                                  sessions, a blank reason or an {@code omitted} count
     */
    public Blockers {
        if (sessions == null) {
            throw new IllegalArgumentException("sessions must not be null");
        }
        sessions = copy(sessions);
        if (omitted < 0 || sessions.size() > MAX_SESSIONS) {
            throw new IllegalArgumentException("at most " + MAX_SESSIONS + " sessions and a count of the rest >= 0");
        }
        if (unknownBecause == null && (waitingSession == null || sessions.isEmpty())) {
            throw new IllegalArgumentException("known blockers need the waiting session and at least one blocker");
        }
        if (unknownBecause != null && (unknownBecause.isBlank() || !sessions.isEmpty() || omitted != 0)) {
            throw new IllegalArgumentException("unknown blockers need a reason and no sessions");
        }
    }

    /**
     * The blockers of {@code waitingSession}, nearest first: the first {@value #MAX_SESSIONS} kept,
     * the rest counted in {@link #omitted()}.
     *
     * @param waitingSession the id of the session that waited; not null
     * @param sessions       every blocker the database named, nearest first; not empty, without null
     *                       elements
     * @return known blockers
     * @throws IllegalArgumentException if {@code waitingSession} is null, or {@code sessions} is null,
     *                                  empty or holds null
     */
    public static Blockers of(String waitingSession, List<Blocker> sessions) {
        if (sessions == null || sessions.isEmpty()) {
            throw new IllegalArgumentException("known blockers need at least one blocker");
        }
        int kept = Math.min(sessions.size(), MAX_SESSIONS);
        return new Blockers(waitingSession, new ArrayList<>(sessions.subList(0, kept)), sessions.size() - kept, null);
    }

    /**
     * Blockers that could not be told, and why.
     *
     * @param because why the blockers are unknown, for messages and logs; not blank
     * @return unknown blockers, without a waiting session or sessions
     * @throws IllegalArgumentException if {@code because} is null or blank
     */
    public static Blockers unknown(String because) {
        if (because == null) {
            throw new IllegalArgumentException("because must not be null");
        }
        return new Blockers(null, List.of(), 0, because);
    }

    private static List<Blocker> copy(List<Blocker> sessions) {
        for (Blocker b : sessions) {
            if (b == null) {
                throw new IllegalArgumentException("sessions must not contain null");
            }
        }
        return List.copyOf(sessions);
    }

    /** {@return whether the database named the blockers: then {@link #sessions()} is not empty} */
    public boolean known() {
        return unknownBecause == null;
    }

    /** {@return the sessions the waiting session waited for itself, unmodifiable; empty when unknown} */
    public List<Blocker> direct() {
        return sessions.stream()
                .filter(b -> b.blocks().equals(waitingSession))
                .collect(Collectors.toUnmodifiableList());
    }

    /** One line for messages and logs: each blocker, or why they are unknown. */
    @Override
    public String toString() {
        if (unknownBecause != null) {
            return "blockers unknown: " + unknownBecause;
        }
        String listed = sessions.stream().map(b -> b.describe(waitingSession)).collect(Collectors.joining("; "));
        return "blocked by " + listed + (omitted > 0 ? "; and " + omitted + " more" : "");
    }
}
