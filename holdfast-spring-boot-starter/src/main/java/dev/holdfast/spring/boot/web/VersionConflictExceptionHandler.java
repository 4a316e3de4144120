package dev.holdfast.spring.boot.web;

import dev.holdfast.optimistic.StaleRow;
import dev.holdfast.optimistic.VersionConflictException;
import dev.holdfast.optimistic.offline.TamperedStateException;
import dev.holdfast.spring.boot.StaleVersionException;
import dev.holdfast.spring.boot.VersionConflictListener;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.servlet.ModelAndView;

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

    private final @Nullable String view;
    private final Consumer<VersionConflictException> onConflict;

    /** @param view the view for browsers; null or blank for the built-in page */
    public VersionConflictExceptionHandler(@Nullable String view) {
        this(view, null);
    }

    /**
     * @param view    the view for browsers; null or blank for the built-in page
     * @param listener told about every answered conflict (the auto-configured one counts
     *                 {@code holdfast.version.conflicts}); may be null
     */
    public VersionConflictExceptionHandler(@Nullable String view, @Nullable VersionConflictListener listener) {
        this.view = view == null || view.isBlank() ? null : view;
        this.onConflict = listener == null ? e -> {} : listener::onConflict;
    }

    /**
     * JSON clients: an RFC 9457 problem detail ({@code application/problem+json}). A conflict is told to the
     * listener first.
     *
     * @param e the refusal, one of the exception types this method is declared to handle
     * @return the {@link VersionProblem}'s problem detail with its status (409 or 400), never cached
     */
    @ExceptionHandler(
            value = {
                VersionConflictException.class,
                StaleVersionException.class,
                ClientVersion.MalformedVersionException.class,
                TamperedStateException.class
            },
            produces = {MediaType.APPLICATION_PROBLEM_JSON_VALUE, MediaType.APPLICATION_JSON_VALUE})
    public ResponseEntity<ProblemDetail> problemDetail(Exception e) {
        HoldfastProblem problem = problemFor(e);
        return ProblemPage.asJson(problem.getStatusCode(), problem.getBody());
    }

    /**
     * Browsers and everyone else: the application's view, or the built-in page. A conflict is told to the
     * listener first.
     *
     * @param e       the refusal, one of the exception types this method is declared to handle
     * @param request the refused request, passed on to {@link #addToModel}
     * @return the view named by {@code holdfast.web.conflict-view} with the {@link VersionProblem} as model
     *         attribute {@value #MODEL_ATTRIBUTE}, or the built-in page listing the stale rows; with the problem's
     *         status (409 or 400)
     */
    @ExceptionHandler({
        VersionConflictException.class,
        StaleVersionException.class,
        ClientVersion.MalformedVersionException.class,
        TamperedStateException.class
    })
    public ModelAndView page(Exception e, HttpServletRequest request) {
        VersionProblem problem = problemFor(e);
        ModelAndView page = view == null
                ? new ModelAndView(new ProblemPage(
                        "version-problem",
                        problem.code(),
                        problem.title(),
                        problem.detail(),
                        problem.staleRows().stream().map(StaleRow::describe).toList()))
                : new ModelAndView(view, MODEL_ATTRIBUTE, problem);
        if (view != null) {
            addToModel(page.getModel(), problem, request);
        }
        page.setStatus(HttpStatus.valueOf(problem.status()));
        return page;
    }

    /** The problem {@code e} is; a conflict is told to the listener. */
    private VersionProblem problemFor(Exception e) {
        if (e instanceof StaleVersionException stale) {
            return problemFor(stale.getCause());
        }
        if (e instanceof VersionConflictException conflict) {
            onConflict.accept(conflict);
            return VersionProblem.of(conflict);
        }
        if (e instanceof ClientVersion.MalformedVersionException malformed) {
            return VersionProblem.badVersion(malformed);
        }
        return VersionProblem.of((TamperedStateException) e);
    }

    /**
     * Adds what the application's page needs besides {@value #MODEL_ATTRIBUTE}; nothing by default.
     * Not called for JSON or the built-in page.
     *
     * @param model   the page's model, which holds the problem as {@value #MODEL_ATTRIBUTE} already
     * @param problem the problem the page shows
     * @param request the refused request
     */
    protected void addToModel(Map<String, Object> model, VersionProblem problem, HttpServletRequest request) {}
}
