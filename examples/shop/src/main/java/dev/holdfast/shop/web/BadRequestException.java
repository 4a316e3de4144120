package dev.holdfast.shop.web;

import java.util.Arrays;

/**
 * A form arrived without what the page always sends (e.g. the version): a forged or broken request.
 * Carries a message code ({@code bad.*}) and its arguments; the page is in the viewer's language.
 */
class BadRequestException extends RuntimeException {

    private final String code;
    private final Object[] args;

    BadRequestException(String code, Object... args) {
        super(code + Arrays.toString(args));
        this.code = code;
        this.args = args.clone();
    }

    String code() {
        return code;
    }

    Object[] args() {
        return args.clone();
    }
}
