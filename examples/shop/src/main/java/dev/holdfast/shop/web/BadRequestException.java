package dev.holdfast.shop.web;

/** A form arrived without what the page always sends (e.g. the version): a forged or broken request. */
class BadRequestException extends RuntimeException {

    BadRequestException(String message) {
        super(message);
    }
}
