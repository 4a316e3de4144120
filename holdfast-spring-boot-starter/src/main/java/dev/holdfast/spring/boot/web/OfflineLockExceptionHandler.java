package dev.holdfast.spring.boot.web;

import dev.holdfast.pessimistic.offline.AlreadyLockedException;
import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.pessimistic.offline.MalformedLockIdException;
import dev.holdfast.pessimistic.offline.LockNotHeldException;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.validation.BindException;
import org.springframework.validation.FieldError;
import org.springframework.web.bind.MissingServletRequestParameterException;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.method.annotation.MethodArgumentTypeMismatchException;
import org.springframework.web.servlet.ModelAndView;
import org.springframework.web.util.HtmlUtils;

import java.util.Map;

/**
 * Answers offline lock refusals: {@link AlreadyLockedException} and {@link LockNotHeldException} (and its
 * subtypes) with 409, a malformed or missing {@link LockId} with 400 — never a 500. Requests that
 * accept JSON but not HTML ({@code fetch} with {@code Accept: application/json}) get an RFC 9457
 * problem detail ({@code application/problem+json}); browsers get the view named by
 * {@code holdfast.web.lock-problem-view} with the {@link LockProblem} as model attribute
 * {@value #MODEL_ATTRIBUTE}, or a small built-in page.
 *
 * <p>It has the lowest precedence, so an application's own handlers win. To add to the model (the
 * signed-in user for a page header, a reload link), subclass it as a {@code @ControllerAdvice} bean
 * and override {@link #addToModel}; the auto-configured one then backs off.
 */
@ControllerAdvice
@Order(Ordered.LOWEST_PRECEDENCE)
public class OfflineLockExceptionHandler {

    /** The model attribute holding the {@link LockProblem}. */
    public static final String MODEL_ATTRIBUTE = "lockProblem";

    private final String view;

    /** @param view the view for browsers; null or blank for the built-in page */
    public OfflineLockExceptionHandler(String view) {
        this.view = view == null || view.isBlank() ? null : view;
    }

    @ExceptionHandler(AlreadyLockedException.class)
    public ModelAndView alreadyLocked(AlreadyLockedException e, HttpServletRequest request) {
        return respond(LockProblem.of(e), request);
    }

    @ExceptionHandler(LockNotHeldException.class)
    public ModelAndView noLock(LockNotHeldException e, HttpServletRequest request) {
        return respond(LockProblem.of(e), request);
    }

    @ExceptionHandler(MalformedLockIdException.class)
    public ModelAndView malformed(MalformedLockIdException e, HttpServletRequest request) {
        return respond(LockProblem.badLockId(false), request);
    }

    /** A {@code @RequestParam LockId} that did not convert; other mismatches go to the next handler. */
    @ExceptionHandler(MethodArgumentTypeMismatchException.class)
    public ModelAndView typeMismatch(MethodArgumentTypeMismatchException e, HttpServletRequest request) {
        if (e.getRequiredType() != LockId.class) {
            throw e;
        }
        return respond(LockProblem.badLockId(e.getValue() == null || e.getValue().toString().isBlank()), request);
    }

    /** A missing {@code @RequestParam LockId}; other missing parameters go to the next handler. */
    @ExceptionHandler(MissingServletRequestParameterException.class)
    public ModelAndView missing(MissingServletRequestParameterException e, HttpServletRequest request) throws Exception {
        if (!LockId.class.getSimpleName().equals(e.getParameterType())) {
            throw e;
        }
        return respond(LockProblem.badLockId(true), request);
    }

    /** A form object whose {@link LockId} field did not bind; other binding errors go to the next handler. */
    @ExceptionHandler(BindException.class)
    public ModelAndView bind(BindException e, HttpServletRequest request) throws Exception {
        for (FieldError error : e.getFieldErrors()) {
            if (e.getFieldType(error.getField()) == LockId.class) {
                return respond(LockProblem.badLockId(error.getRejectedValue() == null
                        || error.getRejectedValue().toString().isBlank()), request);
            }
        }
        throw e;
    }

    /**
     * Adds what the application's page needs besides {@value #MODEL_ATTRIBUTE}; nothing by default.
     * Not called for JSON or the built-in page.
     */
    protected void addToModel(Map<String, Object> model, LockProblem problem, HttpServletRequest request) {
    }

    private ModelAndView respond(LockProblem problem, HttpServletRequest request) {
        return ProblemResponses.respond(request, problem.status(), view, MODEL_ATTRIBUTE, problem, problem.problemDetail(),
                () -> builtInPage(problem), model -> addToModel(model, problem, request));
    }

    /** A minimal page for applications that configure no view. */
    private static String builtInPage(LockProblem problem) {
        String title = HtmlUtils.htmlEscape(problem.title());
        return "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"UTF-8\"><title>" + title
                + "</title></head><body><main data-page=\"lock-problem\" data-code=\"" + problem.code() + "\"><h1>"
                + title + "</h1><p id=\"lock-problem-detail\">" + HtmlUtils.htmlEscape(problem.detail())
                + "</p></main></body></html>";
    }
}
