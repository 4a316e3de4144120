package dev.holdfast.shop.web;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpSession;
import org.springframework.context.MessageSource;
import org.springframework.context.i18n.LocaleContextHolder;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.stereotype.Component;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.util.HtmlUtils;

import java.net.URI;
import java.text.NumberFormat;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Currency;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** What every page shows about the signed-in user, and formatting for templates ({@code @fmt}). */
@ControllerAdvice
class ViewSupport {

    /** Session attribute with the viewer's time zone, as the browser reported it ({@link ViewerSettingsController}). */
    static final String ZONE_ATTRIBUTE = "shop.zone";
    /** Before the browser has reported its zone. */
    static final ZoneId DEFAULT_ZONE = ZoneId.of("UTC");

    /** The signed-in user, or null. */
    record CurrentUser(String name, boolean admin, boolean customer) {}

    @ModelAttribute("currentUser")
    CurrentUser currentUser() {
        return signedIn();
    }

    /** The signed-in user, or null; also for views rendered by exception handlers, which get no model attributes. */
    static CurrentUser signedIn() {
        Authentication auth = SecurityContextHolder.getContext().getAuthentication();
        if (auth == null || !auth.isAuthenticated() || "anonymousUser".equals(auth.getPrincipal())) {
            return null;
        }
        boolean admin = auth.getAuthorities().stream()
                .map(GrantedAuthority::getAuthority)
                .anyMatch("ROLE_ADMIN"::equals);
        boolean customer = auth.getAuthorities().stream()
                .map(GrantedAuthority::getAuthority)
                .anyMatch("ROLE_CUSTOMER"::equals);
        return new CurrentUser(auth.getName(), admin, customer);
    }

    /** The viewer's zone for this request: what their browser reported to this session, else UTC. */
    static ZoneId viewerZone() {
        RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
        if (attributes instanceof ServletRequestAttributes servlet) {
            HttpSession session = servlet.getRequest().getSession(false);
            if (session != null && session.getAttribute(ZONE_ATTRIBUTE) instanceof ZoneId zone) {
                return zone;
            }
        }
        return DEFAULT_ZONE;
    }

    /**
     * Where the user came from, for "back" links on refusal pages: the path and query of a same-origin
     * {@code Referer}, else {@code fallback}. Never another site's address.
     */
    static String backLink(HttpServletRequest request, String fallback) {
        String referer = request.getHeader("Referer");
        if (referer == null) {
            return fallback;
        }
        try {
            URI uri = URI.create(referer);
            if (uri.getHost() == null
                    || !uri.getHost().equalsIgnoreCase(request.getServerName())
                    || uri.getPort() != request.getServerPort()
                    || uri.getRawPath() == null
                    || !uri.getRawPath().startsWith(request.getContextPath() + "/")) {
                return fallback;
            }
            String path = uri.getRawPath().substring(request.getContextPath().length());
            if (path.startsWith("//")
                    || path.equals(request.getRequestURI()
                            .substring(request.getContextPath().length()))) {
                return fallback;
            }
            return uri.getRawQuery() == null ? path : path + "?" + uri.getRawQuery();
        } catch (IllegalArgumentException e) {
            return fallback;
        }
    }

    /**
     * Template helpers, in the viewer's language and time zone: {@code ${@fmt.time(order.modified)}},
     * {@code ${@fmt.money(order.totalCents)}}, {@code ${@fmt.change(order.lastChange)}}.
     */
    @Component("fmt")
    static class Formats {

        private static final DateTimeFormatter UTC = DateTimeFormatter.ofPattern(
                        "yyyy-MM-dd HH:mm:ss 'UTC'", Locale.ROOT)
                .withZone(ZoneOffset.UTC);
        private static final Currency EURO = Currency.getInstance("EUR");
        private static final Pattern STATE_COUNT = Pattern.compile("([A-Z_]+): (\\d+)");

        private final MessageSource messages;

        Formats(MessageSource messages) {
            this.messages = messages;
        }

        /** A time of day in the viewer's zone, with the zone named, e.g. {@code 15:05:12 CET}. */
        public String clock(Instant instant) {
            return format(instant, "format.clock");
        }

        /** Date and time in the viewer's zone, with the zone named, e.g. {@code 2026-11-23 15:05:12 CET}. */
        public String time(Instant instant) {
            return format(instant, "format.time");
        }

        /** The instant in ISO-8601 (UTC), for {@code <time datetime>}. */
        public String iso(Instant instant) {
            return instant == null ? "" : instant.toString();
        }

        /** The same instant in UTC, for operators (title attributes, the locks table). */
        public String utc(Instant instant) {
            return instant == null ? "" : UTC.format(instant);
        }

        /**
         * The same instant in UTC as a hover hint, or null for a viewer whose zone is UTC (the time shown
         * is already in UTC): for {@code th:title}, which then leaves the attribute out.
         */
        public String utcHint(Instant instant) {
            return instant == null || inUtc() ? null : utc(instant);
        }

        /** Whether the viewer's zone is UTC: their times get no UTC hover hint, and the footer promises none. */
        public boolean inUtc() {
            return viewerZone().normalized().equals(ZoneOffset.UTC);
        }

        /**
         * The clock time as an HTML {@code <time>} element (datetime: the instant; title: UTC unless the
         * viewer is in UTC), for messages rendered with {@code th:utext} whose other arguments are escaped.
         */
        public String clockHtml(Instant instant) {
            return timeElement(instant, clock(instant));
        }

        /** Date and time as an HTML {@code <time>} element, like {@link #clockHtml}. */
        public String timeHtml(Instant instant) {
            return timeElement(instant, time(instant));
        }

        private String timeElement(Instant instant, String shown) {
            if (instant == null) {
                return "";
            }
            String hint = utcHint(instant);
            return "<time class=\"instant\" datetime=\"" + instant + "\""
                    + (hint == null ? "" : " title=\"" + hint + "\"") + ">" + HtmlUtils.htmlEscape(shown) + "</time>";
        }

        /** Where the user came from (same-origin {@code Referer}), or null: the "back" link of error pages. */
        public String back() {
            return RequestContextHolder.getRequestAttributes() instanceof ServletRequestAttributes servlet
                    ? backLink(servlet.getRequest(), null)
                    : null;
        }

        /** Text HTML-escaped, for messages rendered with {@code th:utext}. */
        public String html(Object text) {
            return HtmlUtils.htmlEscape(String.valueOf(text));
        }

        /** User data, HTML-escaped, in {@code <strong>}, for messages rendered with {@code th:utext}. */
        public String strong(Object text) {
            return "<strong>" + HtmlUtils.htmlEscape(String.valueOf(text)) + "</strong>";
        }

        /** The viewer's zone id, e.g. {@code Europe/Berlin}. */
        public String zone() {
            return viewerZone().getId();
        }

        /** The viewer's language, e.g. {@code en} or {@code ko} (for {@code <html lang>} and the switcher). */
        public String language() {
            return locale().getLanguage();
        }

        /**
         * This page's address (path and query) for the language switcher to come back to, or {@code /}
         * when the page answered a form (a POST cannot be repeated by a link).
         */
        public String here() {
            if (RequestContextHolder.getRequestAttributes() instanceof ServletRequestAttributes servlet) {
                HttpServletRequest request = servlet.getRequest();
                Object forwarded = request.getAttribute("jakarta.servlet.forward.request_uri");
                if ("GET".equals(request.getMethod())
                        && forwarded == null
                        && request.getAttribute("jakarta.servlet.error.request_uri") == null) {
                    String path = request.getRequestURI()
                            .substring(request.getContextPath().length());
                    String query = request.getQueryString();
                    return query == null ? path : path + "?" + query;
                }
            }
            return "/";
        }

        /** Euro amounts formatted for the viewer's language. */
        public String money(long cents) {
            NumberFormat format = NumberFormat.getCurrencyInstance(locale());
            format.setCurrency(EURO);
            format.setMinimumFractionDigits(2);
            format.setMaximumFractionDigits(2);
            return format.format(cents / 100.0);
        }

        /** An order state's name for pages (never the enum constant). */
        public String state(Object state) {
            return text("state." + state);
        }

        /** A change or attempt recorded as {@link dev.holdfast.shop.order.ChangeText}, in the viewer's language. */
        public String change(String recorded) {
            if (recorded == null) {
                return "";
            }
            List<String> parts = dev.holdfast.shop.order.ChangeText.parse(recorded);
            if (parts.size() == 1 && !recorded.startsWith(dev.holdfast.shop.order.ChangeText.MARK)) {
                return recorded; // free text from an older version of the shop
            }
            List<Object> args = new ArrayList<>();
            for (String arg : parts.subList(1, parts.size())) {
                args.add(
                        dev.holdfast.shop.order.ChangeText.isLines(arg)
                                ? lines(arg)
                                : dev.holdfast.shop.order.ChangeText.isShipping(arg)
                                        ? shipping(dev.holdfast.shop.order.ChangeText.shipping(arg))
                                        : arg);
            }
            return messages.getMessage(parts.get(0), args.toArray(), parts.get(0), locale());
        }

        /** Receiver, address and phone on one line, in the viewer's language ({@code shipping.one-line}). */
        public String shipping(dev.holdfast.shop.order.ShippingInfo info) {
            return messages.getMessage(
                    "shipping.one-line",
                    new Object[] {
                        info.receiver().name(),
                        address(info.address()),
                        info.receiver().phone()
                    },
                    locale());
        }

        /** An address on one line, in the viewer's language ({@code address.one-line}). */
        public String address(dev.holdfast.shop.order.Address address) {
            boolean line2 = address.address2() != null && !address.address2().isBlank();
            return line2
                    ? messages.getMessage(
                            "address.one-line.with-line2",
                            new Object[] {address.address1(), address.address2(), address.zipCode()},
                            locale())
                    : messages.getMessage(
                            "address.one-line", new Object[] {address.address1(), address.zipCode()}, locale());
        }

        /** "PREPARING: 3, SHIPPED: 1" (the nightly report's summary) with the states' names. */
        public String summary(String summary) {
            if (summary == null || summary.equals("no orders")) {
                return text("job.no-orders");
            }
            Matcher m = STATE_COUNT.matcher(summary);
            StringBuilder out = new StringBuilder();
            while (m.find()) {
                m.appendReplacement(out, Matcher.quoteReplacement(state(m.group(1)) + ": " + m.group(2)));
            }
            m.appendTail(out);
            return out.toString();
        }

        private String lines(String encoded) {
            List<String> out = new ArrayList<>();
            for (String[] line : dev.holdfast.shop.order.ChangeText.lines(encoded)) {
                out.add(messages.getMessage("change.line", line, locale()));
            }
            return String.join(", ", out);
        }

        private String text(String code) {
            return messages.getMessage(code, null, code, locale());
        }

        private String format(Instant instant, String patternCode) {
            if (instant == null) {
                return "";
            }
            Locale locale = locale();
            return DateTimeFormatter.ofPattern(messages.getMessage(patternCode, null, locale), locale)
                    .withZone(viewerZone())
                    .format(instant);
        }

        private static Locale locale() {
            return LocaleContextHolder.getLocale();
        }
    }
}
