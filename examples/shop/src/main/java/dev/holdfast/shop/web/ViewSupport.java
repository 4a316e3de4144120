package dev.holdfast.shop.web;

import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.stereotype.Component;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ModelAttribute;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/** What every page shows about the signed-in user, and formatting for templates ({@code @fmt}). */
@ControllerAdvice
class ViewSupport {

    /** The signed-in user, or null. */
    record CurrentUser(String name, boolean admin, boolean customer) {
    }

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
        boolean admin = auth.getAuthorities().stream().map(GrantedAuthority::getAuthority).anyMatch("ROLE_ADMIN"::equals);
        boolean customer = auth.getAuthorities().stream().map(GrantedAuthority::getAuthority).anyMatch("ROLE_CUSTOMER"::equals);
        return new CurrentUser(auth.getName(), admin, customer);
    }

    /** Template helpers: {@code ${@fmt.time(order.modified)}}, {@code ${@fmt.money(order.totalCents)}}. */
    @Component("fmt")
    static class Formats {

        private static final DateTimeFormatter TIME =
                DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'", Locale.ROOT).withZone(ZoneOffset.UTC);
        private static final DateTimeFormatter CLOCK =
                DateTimeFormatter.ofPattern("HH:mm:ss 'UTC'", Locale.ROOT).withZone(ZoneOffset.UTC);

        /** A time of day for "being edited until …", with the zone, e.g. {@code 14:05:12 UTC}. */
        public String clock(Instant instant) {
            return instant == null ? "" : CLOCK.format(instant);
        }

        public String time(Instant instant) {
            return instant == null ? "" : TIME.format(instant);
        }

        public String money(long cents) {
            return String.format(Locale.ROOT, "€%,d.%02d", cents / 100, cents % 100);
        }
    }
}
