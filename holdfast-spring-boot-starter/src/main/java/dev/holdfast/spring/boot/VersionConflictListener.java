package dev.holdfast.spring.boot;

import dev.holdfast.optimistic.VersionConflictException;

/** Told about every version conflict the MVC conflict handler answers (e.g. to count it). */
@FunctionalInterface
public interface VersionConflictListener {

    void onConflict(VersionConflictException conflict);
}
