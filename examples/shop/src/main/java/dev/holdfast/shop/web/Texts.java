package dev.holdfast.shop.web;

import org.springframework.context.MessageSource;
import org.springframework.context.i18n.LocaleContextHolder;
import org.springframework.stereotype.Component;
import org.springframework.web.util.HtmlUtils;

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

    /**
     * The text of {@code code} as HTML, for {@code th:utext}: every argument is escaped except an
     * {@link Html} one (a {@code <time>} element from {@code ViewSupport.Formats#clockHtml}).
     */
    String html(String code, Object... args) {
        Object[] escaped = new Object[args.length];
        for (int i = 0; i < args.length; i++) {
            escaped[i] = args[i] instanceof Html h ? h.html() : HtmlUtils.htmlEscape(String.valueOf(args[i]));
        }
        return messages.getMessage(code, escaped, LocaleContextHolder.getLocale());
    }

    /** A piece of HTML built by the shop itself, passed through {@link #html} unescaped. */
    record Html(String html) {}

    /** The text of {@code code}, or null if the bundles have none. */
    String getOrNull(String code, Object... args) {
        return messages.getMessage(code, args, null, LocaleContextHolder.getLocale());
    }
}
