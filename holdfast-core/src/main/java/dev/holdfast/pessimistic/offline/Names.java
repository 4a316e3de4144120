package dev.holdfast.pessimistic.offline;

import java.time.Duration;

/** Argument checks that run before any SQL. */
final class Names {

    private Names() {
    }

    static String require(String what, String value, int maxLength) {
        if (value == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        if (value.isBlank()) {
            throw new IllegalArgumentException(what + " must not be blank");
        }
        int length = value.codePointCount(0, value.length());
        if (length > maxLength) {
            throw new IllegalArgumentException(what + " has " + length + " characters; at most " + maxLength + " are allowed");
        }
        for (int i = 0; i < value.length(); ) {
            int cp = value.codePointAt(i);
            if (cp >= Character.MIN_SURROGATE && cp <= Character.MAX_SURROGATE) {
                throw new IllegalArgumentException(what + " is not valid Unicode (unpaired surrogate at index " + i + ")");
            }
            if (Character.isISOControl(cp)) {
                throw new IllegalArgumentException(what + " must not contain control characters (index " + i + ")");
            }
            i += Character.charCount(cp);
        }
        return value;
    }

    static Duration positive(String what, Duration value, Duration max) {
        if (value == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        if (value.compareTo(Duration.ofMillis(1)) < 0) {
            throw new IllegalArgumentException(what + " must be at least 1 ms, not " + value);
        }
        if (value.compareTo(max) > 0) {
            throw new IllegalArgumentException(what + " " + value + " exceeds the maximum " + max);
        }
        return value;
    }

    static long micros(Duration d) {
        return d.toNanos() / 1_000;
    }
}
