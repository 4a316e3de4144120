package dev.holdfast.shop.web;

import dev.holdfast.shop.order.OrderNotFoundException;
import dev.holdfast.spring.boot.web.ClientVersion;

import java.util.regex.Pattern;

/** Checks on what a form or URL carries, before any service is called. */
final class FormInput {

    private static final Pattern ORDER_NUMBER = Pattern.compile("[A-Za-z0-9-]{1,32}");

    private FormInput() {
    }

    /**
     * The version the user's page showed, from the hidden {@code version} field.
     *
     * @throws BadRequestException if it is missing or not a version number
     */
    static long version(String raw) {
        try {
            return ClientVersion.parse(raw).value(); // holdfast-spring-boot's form binding helper
        } catch (ClientVersion.MalformedVersionException e) {
            throw new BadRequestException(e.missing()
                    ? "The form did not carry the order version, so the shop cannot tell which "
                      + "state of the order you saw. Nothing was changed; reload the order page and try again."
                    : "The form carried '" + abbreviate(raw) + "' as the order version, which is "
                      + "not a version number. Nothing was changed; reload the order page and try again.");
        }
    }

    /** @throws OrderNotFoundException for anything that cannot be an order number (no such order) */
    static String orderNumber(String raw) {
        if (raw == null || !ORDER_NUMBER.matcher(raw).matches()) {
            throw new OrderNotFoundException(raw == null ? "" : abbreviate(raw));
        }
        return raw;
    }

    private static String abbreviate(String s) {
        return s.length() <= 40 ? s : s.substring(0, 40) + "…";
    }

    /**
     * A required text field of at most {@code max} characters, stripped.
     *
     * @throws BadRequestException if it is missing, blank or too long
     */
    static String text(String field, String raw, int max) {
        if (raw == null || raw.isBlank()) {
            throw new BadRequestException("The " + field + " is missing. Nothing was changed; go back and fill it in.");
        }
        String value = raw.strip();
        if (value.length() > max) {
            throw new BadRequestException("The " + field + " is longer than " + max + " characters. Nothing was changed.");
        }
        return value;
    }

    /**
     * A line quantity, 1 to 99.
     *
     * @throws BadRequestException otherwise
     */
    static int quantity(String raw) {
        try {
            int q = Integer.parseInt(raw == null ? "" : raw.strip());
            if (q >= 1 && q <= 99) {
                return q;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new BadRequestException("A quantity must be a whole number from 1 to 99, not '"
                + abbreviate(raw == null ? "" : raw) + "'. Nothing was changed.");
    }
}
