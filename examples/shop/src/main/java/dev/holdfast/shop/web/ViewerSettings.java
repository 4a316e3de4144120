package dev.holdfast.shop.web;

import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpSession;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.servlet.LocaleResolver;

import java.time.ZoneId;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The viewer's language and time zone. The language follows the browser ({@code Accept-Language}) until
 * the user picks one with the switcher, which is remembered in a cookie; the time zone is reported by
 * the browser ({@code /js/shop.js}) and remembered in the session.
 */
@Controller
class ViewerSettings {

    static final List<Locale> SUPPORTED = List.of(Locale.ENGLISH, Locale.KOREAN);
    static final String LANGUAGE_COOKIE = "shop-lang";
    private static final Set<String> ZONES = ZoneId.getAvailableZoneIds();

    private final LocaleResolver locales;

    ViewerSettings(LocaleResolver locales) {
        this.locales = locales;
    }

    /** The switcher: {@code /language?lang=ko&back=/admin/orders}. An unknown language is refused (400). */
    @GetMapping("/language")
    String language(
            @RequestParam(required = false) String lang,
            @RequestParam(required = false) String back,
            HttpServletRequest request,
            HttpServletResponse response) {
        Locale chosen = SUPPORTED.stream()
                .filter(l -> l.getLanguage().equals(lang))
                .findFirst()
                .orElseThrow(() -> new BadRequestException("bad.language", lang == null ? "" : lang));
        locales.setLocale(request, response, chosen);
        boolean local = back != null
                && back.startsWith("/")
                && !back.startsWith("//")
                && !back.contains("\\")
                && back.length() <= 500;
        return "redirect:" + (local ? back : "/");
    }

    /**
     * The browser's IANA time zone ({@code Intl.DateTimeFormat().resolvedOptions().timeZone}). 204 when
     * remembered; 400 for anything that is not a zone id, and the session keeps the zone it had.
     */
    @PostMapping("/zone")
    ResponseEntity<String> zone(@RequestParam(required = false) String zone, HttpServletRequest request) {
        if (zone == null || !ZONES.contains(zone)) {
            return ResponseEntity.badRequest().body("not a time zone id");
        }
        HttpSession session = request.getSession();
        session.setAttribute(ViewSupport.ZONE_ATTRIBUTE, ZoneId.of(zone));
        return ResponseEntity.noContent().build();
    }

    @Configuration(proxyBeanMethods = false)
    static class LocaleConfiguration {

        /** Named {@code localeResolver}: Spring MVC looks the resolver up by that name. */
        @Bean
        LocaleResolver localeResolver() {
            return new ShopLocaleResolver();
        }
    }

    /** The chosen language (cookie), else the first supported one the browser accepts, else English. */
    static final class ShopLocaleResolver implements LocaleResolver {

        @Override
        public Locale resolveLocale(HttpServletRequest request) {
            Cookie[] cookies = request.getCookies();
            if (cookies != null) {
                for (Cookie c : cookies) {
                    if (LANGUAGE_COOKIE.equals(c.getName())) {
                        for (Locale l : SUPPORTED) {
                            if (l.getLanguage().equals(c.getValue())) {
                                return l;
                            }
                        }
                    }
                }
            }
            if (request.getHeader("Accept-Language") != null) {
                for (Locale accepted : Collections.list(request.getLocales())) {
                    for (Locale l : SUPPORTED) {
                        if (l.getLanguage().equals(accepted.getLanguage())) {
                            return l;
                        }
                    }
                }
            }
            return Locale.ENGLISH;
        }

        @Override
        public void setLocale(HttpServletRequest request, HttpServletResponse response, Locale locale) {
            Cookie cookie = new Cookie(LANGUAGE_COOKIE, locale == null ? "" : locale.getLanguage());
            cookie.setPath(request.getContextPath().isEmpty() ? "/" : request.getContextPath());
            cookie.setMaxAge(locale == null ? 0 : 365 * 24 * 3600);
            cookie.setHttpOnly(true);
            response.addCookie(cookie);
        }
    }
}
