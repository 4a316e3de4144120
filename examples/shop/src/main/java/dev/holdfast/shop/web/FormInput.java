package dev.holdfast.shop.web;

import dev.holdfast.shop.order.OrderNotFoundException;

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
        if (raw == null || raw.isBlank()) {
            throw new BadRequestException("The form did not carry the order version, so the shop cannot tell which "
                    + "state of the order you saw. Nothing was changed; reload the order page and try again.");
        }
        try {
            long version = Long.parseLong(raw.trim());
            if (version < 0) {
                throw new NumberFormatException();
            }
            return version;
        } catch (NumberFormatException e) {
            throw new BadRequestException("The form carried '" + abbreviate(raw) + "' as the order version, which is "
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
}
