package dev.holdfast.jdbc.internal;

import org.jspecify.annotations.Nullable;

/** The one check of the names and keys Holdfast stores (lock types and ids, owners, lease names). */
public final class Names {

    private Names() {}

    /**
     * Accepts 1 to {@code maxLength} characters, counted as code points (as the databases count a
     * {@code VARCHAR}'s length: an emoji is one), not blank, without control characters or unpaired
     * surrogates (which cannot be stored as UTF-8).
     *
     * @param what the argument's name, for the message
     * @return {@code value}
     * @throws IllegalArgumentException otherwise, null included
     */
    public static String require(String what, @Nullable String value, int maxLength) {
        if (value == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        if (value.isBlank()) {
            throw new IllegalArgumentException(what + " must not be blank");
        }
        int length = value.codePointCount(0, value.length());
        if (length > maxLength) {
            throw new IllegalArgumentException(
                    what + " has " + length + " characters; at most " + maxLength + " are allowed");
        }
        for (int i = 0; i < value.length(); ) {
            int cp = value.codePointAt(i);
            if (cp >= Character.MIN_SURROGATE && cp <= Character.MAX_SURROGATE) {
                throw new IllegalArgumentException(what + " is not valid Unicode (unpaired surrogate at index " + i
                        + "): it cannot be stored as UTF-8");
            }
            if (Character.isISOControl(cp)) {
                throw new IllegalArgumentException(what + " must not contain control characters (U+"
                        + String.format("%04X", cp) + " at index " + i + ")");
            }
            i += Character.charCount(cp);
        }
        return value;
    }
}
