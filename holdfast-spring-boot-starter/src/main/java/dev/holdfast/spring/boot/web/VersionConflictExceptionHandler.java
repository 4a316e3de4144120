package dev.holdfast.spring.boot.web;

import dev.holdfast.spring.boot.StaleVersionException;
import dev.holdfast.spring.boot.VersionConflictListener;
import dev.holdfast.optimistic.VersionConflictException;
import dev.holdfast.optimistic.offline.TamperedStateException;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.servlet.ModelAndView;
import org.springframework.web.util.HtmlUtils;

import java.util.Map;
import java.util.function.Consumer;

/**
 * Answers version refusals: {@link VersionConflictException} (also as Spring's
 * {@link StaleVersionException}) with 409 and what changed, by whom and when; a missing or malformed
 * {@link ClientVersion} and a {@link TamperedStateException} with 400 — never a 500. JSON clients get
 * an RFC 9457 problem detail; browsers the view named by {@code holdfast.web.conflict-view} with the
 * {@link VersionProblem} as model attribute {@value #MODEL_ATTRIBUTE}, or a small built-in page.
 *
 * <p>Lowest precedence, so the application's own handlers win. Subclass it as a
 * {@code @ControllerAdvice} bean and override {@link #addToModel} to add to the page's model; the
 * auto-configured one then backs off.
 */
@ControllerAdvice
@Order(Ordered.LOWEST_PRECEDENCE)
public class VersionConflictExceptionHandler {

    /** The model attribute holding the {@link VersionProblem}. */
    public static final String MODEL_ATTRIBUTE = "versionProblem";

    private final String view;
    private final Consumer<VersionConflictException> onConflict;

    /** @param view the view for browsers; null or blank for the built-in page */
    public VersionConflictExceptionHandler(String view) {
        this(view, null);
    }

    /**
     * @param view    the view for browsers; null or blank for the built-in page
     * @param listener told about every answered conflict (the auto-configured one counts
     *                 {@code holdfast.version.conflicts}); may be null
     */
    public VersionConflictExceptionHandler(String view, VersionConflictListener listener) {
        this.view = view == null || view.isBlank() ? null : view;
        this.onConflict = listener == null ? e -> { } : listener::onConflict;
    }

    @ExceptionHandler(VersionConflictException.class)
    public ModelAndView conflict(VersionConflictException e, HttpServletRequest request) {
        onConflict.accept(e);
        return respond(VersionProblem.of(e), request);
    }

    @ExceptionHandler(StaleVersionException.class)
    public ModelAndView staleVersion(StaleVersionException e, HttpServletRequest request) {
        return conflict(e.getCause(), request);
    }

    @ExceptionHandler(ClientVersion.MalformedVersionException.class)
    public ModelAndView badVersion(ClientVersion.MalformedVersionException e, HttpServletRequest request) {
        return respond(VersionProblem.badVersion(e), request);
    }

    @ExceptionHandler(TamperedStateException.class)
    public ModelAndView tampered(TamperedStateException e, HttpServletRequest request) {
        return respond(VersionProblem.of(e), request);
    }

    /**
     * Adds what the application's page needs besides {@value #MODEL_ATTRIBUTE}; nothing by default.
     * Not called for JSON or the built-in page.
     */
    protected void addToModel(Map<String, Object> model, VersionProblem problem, HttpServletRequest request) {
    }

    private ModelAndView respond(VersionProblem problem, HttpServletRequest request) {
        return ProblemResponses.respond(request, problem.status(), view, MODEL_ATTRIBUTE, problem, problem.problemDetail(),
                () -> builtInPage(problem), model -> addToModel(model, problem, request));
    }

    /** A minimal page for applications that configure no view. */
    private static String builtInPage(VersionProblem problem) {
        String title = HtmlUtils.htmlEscape(problem.title());
        StringBuilder rows = new StringBuilder();
        problem.staleRows().forEach(r -> rows.append("<li>").append(HtmlUtils.htmlEscape(r.describe())).append("</li>"));
        return "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"UTF-8\"><title>" + title
                + "</title></head><body><main data-page=\"version-problem\" data-code=\"" + problem.code() + "\"><h1>"
                + title + "</h1><p id=\"version-problem-detail\">" + HtmlUtils.htmlEscape(problem.detail()) + "</p>"
                + (rows.isEmpty() ? "" : "<ul id=\"stale-rows\">" + rows + "</ul>")
                + "<p><a href=\"javascript:location.reload()\">Reload</a></p></main></body></html>";
    }
}
