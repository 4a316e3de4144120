package dev.holdfast.shop.web;

import org.springframework.context.MessageSource;
import org.springframework.context.i18n.LocaleContextHolder;
import org.springframework.stereotype.Component;

/** Texts built in Java (notices, refusals), from the message bundles in the request's language. */
@Component
class Texts {

    private final MessageSource messages;

    Texts(MessageSource messages) {
        this.messages = messages;
    }

    String get(String code, Object... args) {
        return messages.getMessage(code, args, LocaleContextHolder.getLocale());
    }

    /** The text of {@code code}, or null if the bundles have none. */
    String getOrNull(String code, Object... args) {
        return messages.getMessage(code, args, null, LocaleContextHolder.getLocale());
    }
}
