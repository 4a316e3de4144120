package dev.holdfast.spring.boot.web;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;
import org.springframework.core.io.ClassPathResource;
import org.springframework.http.CacheControl;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.util.PropertyPlaceholderHelper;
import org.springframework.util.StreamUtils;
import org.springframework.web.servlet.View;
import org.springframework.web.util.HtmlUtils;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * The small built-in page for applications that configure no view (and the JSON answer): {@code problem-page.html} beside
 * this class, its placeholders filled with HTML-escaped values.
 *
 * @param page   {@code lock-problem} or {@code version-problem}; also names the detail paragraph's id
 * @param code   the problem's stable code
 * @param title  the headline
 * @param detail what happened
 * @param items  listed under the detail (stale rows); may be empty
 */
record ProblemPage(String page, String code, String title, String detail, List<String> items) implements View {

    private static final String TEMPLATE = read("problem-page.html");
    private static final PropertyPlaceholderHelper PLACEHOLDERS = new PropertyPlaceholderHelper("${", "}");

    ProblemPage {
        items = List.copyOf(items);
    }

    @Override
    public String getContentType() {
        return MediaType.TEXT_HTML_VALUE + ";charset=UTF-8";
    }

    @Override
    public void render(@Nullable Map<String, ?> model, HttpServletRequest request, HttpServletResponse response)
            throws IOException {
        response.setContentType(getContentType());
        response.setCharacterEncoding(StandardCharsets.UTF_8.name());
        response.getWriter().write(html());
    }

    /** The page's HTML. */
    String html() {
        Properties values = new Properties();
        values.setProperty("page", page);
        values.setProperty("code", escape(code));
        values.setProperty("title", escape(title));
        values.setProperty("detail", escape(detail));
        StringBuilder list = new StringBuilder();
        if (!items.isEmpty()) {
            list.append("<ul id=\"stale-rows\">");
            items.forEach(item -> list.append("<li>").append(escape(item)).append("</li>"));
            list.append("</ul>");
        }
        values.setProperty("items", list.toString());
        return PLACEHOLDERS.replacePlaceholders(TEMPLATE, values);
    }

    /**
     * A problem detail as {@code application/problem+json} (also to clients that asked for
     * {@code application/json}), never cached: every JSON refusal of the MVC helpers.
     */
    static ResponseEntity<ProblemDetail> asJson(HttpStatusCode status, ProblemDetail body) {
        return ResponseEntity.status(status)
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .cacheControl(CacheControl.noStore())
                .body(body);
    }

    /** HTML-escaped, and {@code $} too, so a value never reads as a placeholder. */
    private static String escape(String value) {
        return HtmlUtils.htmlEscape(value).replace("$", "&#36;");
    }

    private static String read(String name) {
        try (var in = new ClassPathResource(name, ProblemPage.class).getInputStream()) {
            return StreamUtils.copyToString(in, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("reading the built-in page " + name, e);
        }
    }
}
