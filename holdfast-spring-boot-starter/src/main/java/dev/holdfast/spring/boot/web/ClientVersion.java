package dev.holdfast.spring.boot.web;

import org.jspecify.annotations.Nullable;

/**
 * The version a page showed, carried back by its form ({@code <input type="hidden" name="version">}).
 * Bind it with {@code @RequestParam ClientVersion version} (converted by the auto-configured MVC
 * helpers) or parse it with {@link #parse}; a missing, blank, non-numeric or negative value is answered
 * with 400 by {@link VersionConflictExceptionHandler}, before the controller runs, so nothing changes.
 *
 * <pre>{@code
 * @PostMapping("/orders/{n}/ship")
 * String ship(@PathVariable String n, @RequestParam ClientVersion version) {
 *     orders.startShipping(n, version.value());   // → VersionConflictException.requireVersion(order.stamp(), "order", n, …)
 * }
 * }</pre>
 *
 * @param value the version, not negative
 */
public record ClientVersion(long value) {

    /** Longest text accepted as a version: a long has at most 19 digits. */
    static final int MAX_LENGTH = 19;

    /**
     * A version as the page showed it.
     *
     * @param value the version, not negative
     * @throws MalformedVersionException if {@code value} is negative
     */
    public ClientVersion {
        if (value < 0) {
            throw new MalformedVersionException(Long.toString(value));
        }
    }

    /**
     * The version a form field carries.
     *
     * @param raw the form field, e.g. {@code "7"} (surrounding blanks are ignored)
     * @return the version, 0 or more
     * @throws MalformedVersionException if it is null, blank, not a decimal number, or negative
     */
    public static ClientVersion parse(String raw) {
        if (raw == null || raw.isBlank()) {
            throw new MalformedVersionException(null);
        }
        String s = raw.strip();
        if (s.length() > MAX_LENGTH || !s.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new MalformedVersionException(raw);
        }
        try {
            return new ClientVersion(Long.parseLong(s));
        } catch (NumberFormatException e) {
            throw new MalformedVersionException(raw);
        }
    }

    /** A form carried no version, or something that is not one. */
    public static final class MalformedVersionException extends IllegalArgumentException {

        /** Whether the version was missing (rather than malformed). */
        private final boolean missing;

        MalformedVersionException(@Nullable String raw) {
            super(
                    raw == null
                            ? "the form carried no version"
                            : "the form carried '" + abbreviate(raw) + "' as a version, which is not a version number");
            this.missing = raw == null;
        }

        /** {@return whether the version was missing (null or blank), rather than malformed} */
        public boolean missing() {
            return missing;
        }

        private static String abbreviate(String s) {
            return s.length() <= 40 ? s : s.substring(0, 40) + "…";
        }
    }
}
