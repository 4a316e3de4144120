package dev.holdfast.pessimistic.offline;

import org.jspecify.annotations.Nullable;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Optional;

/**
 * The token that {@link LockManager#tryLock} hands out: 128 bits from {@link SecureRandom}, in
 * base64url without padding (22 characters, safe in a form field or URL). It is a capability —
 * whoever presents it may use the lock — so it is never derived from the type, id or owner, its
 * {@link #toString()} shows only a prefix (safe for logs), and {@link #equals} compares in
 * constant time.
 *
 * <p>A value coming back from a form is checked for shape by {@link #parse} (or the constructor)
 * before any SQL runs; whether it still authorizes anything is for {@link LockManager#checkLock}.
 */
public final class LockId {

    /** Length of every value: 16 bytes in base64url without padding. */
    public static final int LENGTH = 22;

    private static final int BYTES = 16;
    private static final String ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    // The last character carries 2 bits of data and 4 zero bits: only these four are canonical.
    private static final String LAST = "AQgw";

    private final String value;

    /**
     * A lock id from its string form, as {@link #getValue()} gave it.
     *
     * @param value {@value #LENGTH} base64url characters encoding 128 bits
     * @throws MalformedLockIdException if {@code value} is not a well-formed lock id
     */
    public LockId(String value) {
        String problem = problem(value);
        if (problem != null) {
            throw new MalformedLockIdException(problem);
        }
        this.value = value;
    }

    /**
     * Parses a lock id from a form or URL.
     *
     * @param value the string form, as {@link #getValue()} gave it
     * @return the lock id; whether it authorizes anything is not checked
     * @throws MalformedLockIdException if {@code value} is null or not {@value #LENGTH} base64url
     *                                  characters encoding 128 bits
     */
    public static LockId parse(String value) {
        return new LockId(value);
    }

    /**
     * Like {@link #parse}, but empty instead of an exception for a malformed value.
     *
     * @param value the string form, as {@link #getValue()} gave it; may be null
     * @return the lock id; empty if {@code value} is null or malformed
     */
    public static Optional<LockId> tryParse(String value) {
        return problem(value) == null ? Optional.of(new LockId(value)) : Optional.empty();
    }

    static LockId generate(SecureRandom random) {
        byte[] bytes = new byte[BYTES];
        random.nextBytes(bytes);
        return new LockId(Base64.getUrlEncoder().withoutPadding().encodeToString(bytes));
    }

    private static @Nullable String problem(String value) {
        if (value == null) {
            return "lock id is missing";
        }
        if (value.length() != LENGTH) {
            return "a lock id has " + LENGTH + " characters, not " + value.length();
        }
        for (int i = 0; i < LENGTH; i++) {
            if (ALPHABET.indexOf(value.charAt(i)) < 0) {
                return "a lock id contains only base64url characters (A-Z a-z 0-9 - _)";
            }
        }
        if (LAST.indexOf(value.charAt(LENGTH - 1)) < 0) {
            return "not a canonical 128-bit lock id";
        }
        return null;
    }

    /** {@return the full value, to put in a hidden form field; treat it as a secret} */
    public String getValue() {
        return value;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof LockId id
                && MessageDigest.isEqual(
                        value.getBytes(StandardCharsets.US_ASCII), id.value.getBytes(StandardCharsets.US_ASCII));
    }

    @Override
    public int hashCode() {
        return value.hashCode();
    }

    /** A prefix only, so that logs never hold a usable token. */
    @Override
    public String toString() {
        return "LockId[" + value.substring(0, 4) + "…]";
    }
}
