package dev.holdfast.spring.boot.web;

import dev.holdfast.pessimistic.offline.AlreadyLockedException;
import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.pessimistic.offline.LockNotHeldException;
import dev.holdfast.pessimistic.offline.MalformedLockIdException;
import dev.holdfast.spring.boot.OfflineLockHeldException;
import dev.holdfast.spring.boot.OfflineLockLostException;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.validation.BindException;
import org.springframework.validation.FieldError;
import org.springframework.web.bind.MissingServletRequestParameterException;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.method.annotation.MethodArgumentTypeMismatchException;
import org.springframework.web.servlet.ModelAndView;

import java.util.List;
import java.util.Map;

/**
 * Answers offline lock refusals: {@link AlreadyLockedException} and {@link LockNotHeldException} (and its
 * subtypes) with 409, a malformed or missing {@link LockId} with 400 — never a 500. Requests that
 * accept JSON but not HTML ({@code fetch} with {@code Accept: application/json}) get an RFC 9457
 * problem detail ({@code application/problem+json}); browsers get the view named by
 * {@code holdfast.web.lock-problem-view} with the {@link LockProblem} as model attribute
 * {@value #MODEL_ATTRIBUTE}, or a small built-in page.
 *
 * <p>It has the lowest precedence, so an application's own handlers win. Spring asks each advice in order, and the
 * starter's lock manager throws Spring's exceptions ({@code OfflineLockHeldException} is a
 * {@code PessimisticLockingFailureException}): an application advice that handles {@code DataAccessException} or
 * {@code PessimisticLockingFailureException} takes these too, unless it is ordered after this one (or a subclass of
 * this one is ordered first, as the reference shop's is). To add to the model (the
 * signed-in user for a page header, a reload link), subclass it as a {@code @ControllerAdvice} bean
 * and override {@link #addToModel}; the auto-configured one then backs off.
 */
@ControllerAdvice
@Order(Ordered.LOWEST_PRECEDENCE)
public class OfflineLockExceptionHandler {

    /** The model attribute holding the {@link LockProblem}. */
    public static final String MODEL_ATTRIBUTE = "lockProblem";

    private final @Nullable String view;

    /** @param view the view for browsers; null or blank for the built-in page */
    public OfflineLockExceptionHandler(@Nullable String view) {
        this.view = view == null || view.isBlank() ? null : view;
    }

    /**
     * JSON clients: an RFC 9457 problem detail ({@code application/problem+json}).
     *
     * @param e the refusal, one of the exception types this method is declared to handle
     * @return the {@link LockProblem}'s problem detail with its status (409 or 400), never cached
     * @throws Exception {@code e} itself when it is a type mismatch, a missing parameter or a binding error that is
     *                   not about a {@link LockId}, for the next handler
     */
    @ExceptionHandler(
            value = {
                AlreadyLockedException.class,
                LockNotHeldException.class,
                OfflineLockHeldException.class,
                OfflineLockLostException.class,
                MalformedLockIdException.class,
                MethodArgumentTypeMismatchException.class,
                MissingServletRequestParameterException.class,
                BindException.class
            },
            produces = {MediaType.APPLICATION_PROBLEM_JSON_VALUE, MediaType.APPLICATION_JSON_VALUE})
    public ResponseEntity<ProblemDetail> problemDetail(Exception e) throws Exception {
        HoldfastProblem problem = problemFor(e);
        return ProblemPage.asJson(problem.getStatusCode(), problem.getBody());
    }

    /**
     * Browsers and everyone else: the application's view, or the built-in page.
     *
     * @param e       the refusal, one of the exception types this method is declared to handle
     * @param request the refused request, passed on to {@link #addToModel}
     * @return the view named by {@code holdfast.web.lock-problem-view} with the {@link LockProblem} as model
     *         attribute {@value #MODEL_ATTRIBUTE}, or the built-in page; with the problem's status (409 or 400)
     * @throws Exception {@code e} itself when it is a type mismatch, a missing parameter or a binding error that is
     *                   not about a {@link LockId}, for the next handler
     */
    @ExceptionHandler({
        AlreadyLockedException.class,
        LockNotHeldException.class,
        OfflineLockHeldException.class,
        OfflineLockLostException.class,
        MalformedLockIdException.class,
        MethodArgumentTypeMismatchException.class,
        MissingServletRequestParameterException.class,
        BindException.class
    })
    public ModelAndView page(Exception e, HttpServletRequest request) throws Exception {
        LockProblem problem = problemFor(e);
        ModelAndView page = view == null
                ? new ModelAndView(
                        new ProblemPage("lock-problem", problem.code(), problem.title(), problem.detail(), List.of()))
                : new ModelAndView(view, MODEL_ATTRIBUTE, problem);
        if (view != null) {
            addToModel(page.getModel(), problem, request);
        }
        page.setStatus(HttpStatus.valueOf(problem.status()));
        return page;
    }

    /**
     * The problem {@code e} is, or {@code e} itself rethrown when it is a type mismatch, missing
     * parameter or binding error that is not about a {@link LockId} (the next handler's business).
     */
    private static LockProblem problemFor(Exception e) throws Exception {
        if (e instanceof AlreadyLockedException x) {
            return LockProblem.of(x);
        }
        if (e instanceof OfflineLockHeldException x) { // the starter's lock manager throws Spring's exceptions
            return LockProblem.of(x.getCause());
        }
        if (e instanceof OfflineLockLostException x) {
            return LockProblem.of(x.getCause());
        }
        if (e instanceof LockNotHeldException x) {
            return LockProblem.of(x);
        }
        if (e instanceof MalformedLockIdException) {
            return LockProblem.badLockId(false);
        }
        if (e instanceof MethodArgumentTypeMismatchException x && x.getRequiredType() == LockId.class) {
            return LockProblem.badLockId(
                    x.getValue() == null || x.getValue().toString().isBlank());
        }
        if (e instanceof MissingServletRequestParameterException x
                && LockId.class.getSimpleName().equals(x.getParameterType())) {
            return LockProblem.badLockId(true);
        }
        if (e instanceof BindException x) {
            for (FieldError error : x.getFieldErrors()) {
                if (x.getFieldType(error.getField()) == LockId.class) {
                    return LockProblem.badLockId(error.getRejectedValue() == null
                            || error.getRejectedValue().toString().isBlank());
                }
            }
        }
        throw e;
    }

    /**
     * Adds what the application's page needs besides {@value #MODEL_ATTRIBUTE}; nothing by default.
     * Not called for JSON or the built-in page.
     *
     * @param model   the page's model, which holds the problem as {@value #MODEL_ATTRIBUTE} already
     * @param problem the problem the page shows
     * @param request the refused request
     */
    protected void addToModel(Map<String, Object> model, LockProblem problem, HttpServletRequest request) {}
}
