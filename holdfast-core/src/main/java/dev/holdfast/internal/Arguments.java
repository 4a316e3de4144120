package dev.holdfast.internal;

import org.jspecify.annotations.Nullable;

/** Argument checks with Holdfast's one rule: every invalid argument, null included, is an {@link IllegalArgumentException}. */
public final class Arguments {

    private Arguments() {}

    /**
     * @return {@code value}
     * @throws IllegalArgumentException "{@code name} must not be null" if it is null
     */
    public static <T> T notNull(@Nullable T value, String name) {
        if (value == null) {
            throw new IllegalArgumentException(name + " must not be null");
        }
        return value;
    }
}
