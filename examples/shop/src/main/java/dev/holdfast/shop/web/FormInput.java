package dev.holdfast.shop.web;

import dev.holdfast.shop.order.OrderNotFoundException;
import dev.holdfast.spring.boot.web.ClientVersion;
import org.springframework.context.MessageSourceResolvable;
import org.springframework.context.support.DefaultMessageSourceResolvable;

import java.util.regex.Pattern;

/** Checks on what a form or URL carries, before any service is called. */
final class FormInput {

    private static final Pattern ORDER_NUMBER = Pattern.compile("[A-Za-z0-9-]{1,32}");

    private FormInput() {}

    /**
     * The version the user's page showed, from the hidden {@code version} field.
     *
     * @throws BadRequestException if it is missing or not a version number
     */
    static long version(String raw) {
        try {
            return ClientVersion.parse(raw).value(); // holdfast-spring-boot-starter's form binding helper
        } catch (ClientVersion.MalformedVersionException e) {
            throw e.missing()
                    ? new BadRequestException("bad.version-missing")
                    : new BadRequestException("bad.version-malformed", abbreviate(raw));
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
            throw new BadRequestException("bad.field-missing", fieldName(field));
        }
        String value = raw.strip();
        if (value.length() > max) {
            throw new BadRequestException("bad.field-too-long", fieldName(field), max);
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
        throw new BadRequestException("bad.quantity", abbreviate(raw == null ? "" : raw));
    }

    /** The field's name in the viewer's language (message {@code field.<field>}). */
    private static MessageSourceResolvable fieldName(String field) {
        return new DefaultMessageSourceResolvable(new String[] {"field." + field}, field);
    }
}
