package dev.holdfast.spring.boot;

import dev.holdfast.optimistic.VersionConflictException;

/** Told about every version conflict the MVC conflict handler answers (e.g. to count it). */
@FunctionalInterface
public interface VersionConflictListener {

    /**
     * Called on the request's thread for each version conflict the handler answers, before it builds the answer;
     * not for a malformed client version or a tampered state.
     *
     * @param conflict the conflict, as Holdfast threw it (the cause, when it arrived as a
     *                 {@link StaleVersionException})
     */
    void onConflict(VersionConflictException conflict);
}
