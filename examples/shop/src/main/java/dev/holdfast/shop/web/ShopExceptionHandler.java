package dev.holdfast.shop.web;

import dev.holdfast.optimistic.offline.TamperedStateException;
import dev.holdfast.pessimistic.LockTimeoutException;
import dev.holdfast.pessimistic.RowLockException;
import dev.holdfast.shop.order.ChangeText;
import dev.holdfast.shop.order.OrderNotFoundException;
import dev.holdfast.shop.order.OrderService;
import dev.holdfast.shop.order.OrderStateException;
import dev.holdfast.shop.order.OrderVersionCheck;
import dev.holdfast.shop.order.OrderVersionCheck.StaleOrderException;
import dev.holdfast.shop.waits.TimedOutWaits;
import dev.holdfast.spring.boot.RowLockTimeoutException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.core.annotation.Order;
import org.springframework.dao.PessimisticLockingFailureException;
import org.springframework.http.HttpStatus;
import org.springframework.orm.ObjectOptimisticLockingFailureException;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;

/**
 * Turns every refused change into a page that says what happened and how to go on; nothing was saved.
 * Ordered before holdfast-spring-boot-starter's generic handlers (lowest precedence): a
 * {@link StaleOrderException} is a {@code VersionConflictException}, and the shop's page says more.
 */
@ControllerAdvice
@Order(0)
class ShopExceptionHandler {

    private final OrderService orders;
    private final Texts texts;
    private final TimedOutWaits waits;

    ShopExceptionHandler(OrderService orders, Texts texts, TimedOutWaits waits) {
        this.orders = orders;
        this.texts = texts;
        this.waits = waits;
    }

    @ExceptionHandler(StaleOrderException.class)
    String conflict(StaleOrderException e, HttpServletRequest request, HttpServletResponse response, Model model) {
        response.setStatus(HttpStatus.CONFLICT.value());
        model.addAttribute("currentUser", ViewSupport.signedIn());
        model.addAttribute("conflict", e);
        dev.holdfast.shop.order.Order current = orders.anyOrder(e.orderNumber());
        model.addAttribute("order", current);
        model.addAttribute("theirChanges", TheirChanges.of(request, current));
        model.addAttribute("reloadLink", orderPage(request, e.orderNumber()));
        model.addAttribute("typed", typed(request, e.orderNumber()));
        return "conflict";
    }

    /** Another transaction committed between our read and our write: JPA's {@code @Version} caught it. */
    @ExceptionHandler(ObjectOptimisticLockingFailureException.class)
    String staleWrite(
            ObjectOptimisticLockingFailureException e,
            HttpServletRequest request,
            HttpServletResponse response,
            Model model) {
        if (!OrderVersionCheck.isStaleWrite(e)) {
            throw e;
        }
        String number = OrderVersionCheck.orderNumberOf(e);
        // Every form that writes carries the version it showed; a missing one was refused with 400 before any write.
        long seen = FormInput.version(request.getParameter("version"));
        StaleOrderException conflict =
                StaleOrderException.afterStaleWrite(orders.anyOrder(number), seen, describe(request));
        return conflict(conflict, request, response, model);
    }

    @ExceptionHandler(RowLockException.class)
    String busy(RowLockException e, HttpServletRequest request, HttpServletResponse response, Model model) {
        response.setStatus(HttpStatus.CONFLICT.value());
        response.setHeader("Retry-After", "5");
        String number = String.valueOf(e.row().key());
        String why = e instanceof LockTimeoutException t
                ? texts.get(
                        "problem.busy.timeout", number, String.valueOf(t.bound().toMillis() / 1000.0))
                : texts.get("problem.busy.deadlock", number);
        model.addAttribute("typed", typed(request, number));
        if (e instanceof LockTimeoutException t) {
            ViewSupport.CurrentUser user = ViewSupport.signedIn();
            waits.rowLock(user == null ? "?" : user.name(), number, t);
            // Who held the order (other sessions' users, addresses, statements): for admins only, never customers.
            if (user != null && user.admin()) {
                model.addAttribute("blockers", t.blockers());
                model.addAttribute("blockedOrder", number);
            }
        }
        return problem(
                model,
                "busy",
                texts.get("problem.busy.title", number),
                texts.get("problem.busy.tail", why),
                orderPage(request, number),
                texts.get("problem.busy.link", number));
    }

    /** The same through the starter's exception translation (a {@code CannotAcquireLockException}). */
    @ExceptionHandler(RowLockTimeoutException.class)
    String busyTranslated(
            RowLockTimeoutException e, HttpServletRequest request, HttpServletResponse response, Model model) {
        return busy(e.getCause(), request, response, model);
    }

    /** A deadlock through the starter's exception translation; other locking failures are not this handler's. */
    @ExceptionHandler(PessimisticLockingFailureException.class)
    String busyTranslated(
            PessimisticLockingFailureException e,
            HttpServletRequest request,
            HttpServletResponse response,
            Model model) {
        if (e.getCause() instanceof RowLockException rowLock) {
            return busy(rowLock, request, response, model);
        }
        throw e;
    }

    @ExceptionHandler(OrderNotFoundException.class)
    String notFound(OrderNotFoundException e, HttpServletResponse response, Model model) {
        response.setStatus(HttpStatus.NOT_FOUND.value());
        return problem(
                model,
                "not-found",
                texts.get("problem.not-found.title"),
                texts.get("problem.not-found.text", e.orderNumber()),
                "/",
                texts.get("link.home"));
    }

    @ExceptionHandler(OrderStateException.class)
    String wrongState(OrderStateException e, HttpServletRequest request, HttpServletResponse response, Model model) {
        response.setStatus(HttpStatus.CONFLICT.value());
        String action = texts.get("action." + e.action().replace(' ', '-'));
        return problem(
                model,
                "wrong-state",
                texts.get("problem.wrong-state.title"),
                texts.get(
                        "problem.wrong-state.text",
                        action,
                        e.orderNumber(),
                        texts.get("state." + e.state().name())),
                orderPage(request, e.orderNumber()),
                texts.get("problem.wrong-state.link", e.orderNumber()));
    }

    /** A sealed invoice state that does not verify: altered, missing, another admin's or another order's. */
    @ExceptionHandler(TamperedStateException.class)
    String tampered(TamperedStateException e, HttpServletRequest request, HttpServletResponse response, Model model) {
        response.setStatus(HttpStatus.BAD_REQUEST.value());
        model.addAttribute("backLink", ViewSupport.backLink(request, null));
        return problem(
                model,
                "bad-request",
                texts.get("problem.tampered.title"),
                texts.get("problem.tampered.text"),
                "/admin/orders",
                texts.get("nav.all-orders"));
    }

    @ExceptionHandler(BadRequestException.class)
    String badRequest(BadRequestException e, HttpServletRequest request, HttpServletResponse response, Model model) {
        response.setStatus(HttpStatus.BAD_REQUEST.value());
        // The way back to where the user was (the form's page), besides Home.
        model.addAttribute("backLink", ViewSupport.backLink(request, null));
        return problem(
                model,
                "bad-request",
                texts.get("problem.bad-request.title"),
                texts.get(e.code(), e.args()),
                "/",
                texts.get("link.home"));
    }

    private static String problem(
            Model model, String page, String title, String message, String link, String linkText) {
        model.addAttribute("currentUser", ViewSupport.signedIn());
        model.addAttribute("page", page);
        model.addAttribute("title", title);
        model.addAttribute("message", message);
        model.addAttribute("link", link);
        model.addAttribute("linkText", linkText);
        return "problem";
    }

    /** What a refused form carried, to submit again at the order's current version; null for other requests. */
    private TypedValues typed(HttpServletRequest request, String orderNumber) {
        if (!"POST".equals(request.getMethod())) {
            return null;
        }
        return TypedValues.resubmit(request, orders.anyOrder(orderNumber));
    }

    private static String orderPage(HttpServletRequest request, String orderNumber) {
        return (isAdminPage(request) ? "/admin/orders/" : "/my/orders/") + orderNumber;
    }

    private static boolean isAdminPage(HttpServletRequest request) {
        return request.getRequestURI().startsWith(request.getContextPath() + "/admin/");
    }

    private static String describe(HttpServletRequest request) {
        return ChangeText.of(isAdminPage(request) ? "attempt.start-shipping" : "attempt.change-address-any");
    }
}
