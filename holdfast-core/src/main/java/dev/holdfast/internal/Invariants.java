package dev.holdfast.internal;

import org.jspecify.annotations.Nullable;

/**
 * Checks of what Holdfast's own code guarantees, as opposed to what a caller passes ({@link Arguments}):
 * a breach is a bug in Holdfast, raised as {@link IllegalStateException} with why it cannot happen.
 */
public final class Invariants {

    private Invariants() {}

    /**
     * @param why why {@code value} is never null here
     * @return {@code value}
     * @throws IllegalStateException {@code why} if it is null after all
     */
    public static <T> T nonNull(@Nullable T value, String why) {
        if (value == null) {
            throw new IllegalStateException("Holdfast bug, expected non-null: " + why);
        }
        return value;
    }
}
