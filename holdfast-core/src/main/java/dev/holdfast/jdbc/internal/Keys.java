package dev.holdfast.jdbc.internal;

import org.jspecify.annotations.Nullable;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.UUID;

/** The one check and normal form of row keys: what a row lock or a versioned row is named by. */
public final class Keys {

    /** Longest string key accepted. */
    public static final int MAX_STRING_KEY = 1024;

    private Keys() {}

    /**
     * The key as Holdfast binds and orders it: integral numbers become {@link Long}; {@link String},
     * {@link UUID} and {@link BigDecimal} stay as they are.
     *
     * @param what the argument's name, for the message
     * @throws IllegalArgumentException for null, a blank or over-long string, a {@link BigInteger}
     *                                  beyond {@code long}, or another type
     */
    public static Object normalize(String what, @Nullable Object key) {
        if (key == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        if (key instanceof String s) {
            if (s.isBlank() || s.length() > MAX_STRING_KEY) {
                throw new IllegalArgumentException("a String " + what + " must be 1 to " + MAX_STRING_KEY
                        + " characters and not blank, was " + (s.isBlank() ? "blank" : s.length() + " characters"));
            }
            return s;
        }
        if (key instanceof Long || key instanceof BigDecimal || key instanceof UUID) {
            return key;
        }
        if (key instanceof Integer || key instanceof Short || key instanceof Byte) {
            return ((Number) key).longValue();
        }
        if (key instanceof BigInteger b) {
            try {
                return b.longValueExact();
            } catch (ArithmeticException e) {
                throw new IllegalArgumentException(what + " " + b + " does not fit a BIGINT", e);
            }
        }
        throw new IllegalArgumentException("Unsupported " + what + " type "
                + key.getClass().getName() + ": use String, an integral number, BigDecimal or UUID");
    }
}
