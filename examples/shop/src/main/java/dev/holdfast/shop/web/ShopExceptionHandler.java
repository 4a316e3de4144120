package dev.holdfast.shop.web;

import dev.holdfast.pessimistic.LockTimeoutException;
import dev.holdfast.pessimistic.RowLockException;
import dev.holdfast.shop.order.OrderNotFoundException;
import dev.holdfast.shop.order.OrderService;
import dev.holdfast.shop.order.OrderStateException;
import dev.holdfast.shop.order.OrderVersionCheck;
import dev.holdfast.shop.order.OrderVersionCheck.StaleOrderException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import dev.holdfast.version.offline.TamperedStateException;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.orm.ObjectOptimisticLockingFailureException;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;

/**
 * Turns every refused change into a page that says what happened and how to go on; nothing was saved.
 * Ordered before holdfast-spring-boot's generic handlers (lowest precedence): a
 * {@link StaleOrderException} is a {@code VersionConflictException}, and the shop's page says more.
 */
@ControllerAdvice
@Order(0)
class ShopExceptionHandler {

    private final OrderService orders;

    ShopExceptionHandler(OrderService orders) {
        this.orders = orders;
    }

    @ExceptionHandler(StaleOrderException.class)
    String conflict(StaleOrderException e, HttpServletRequest request, HttpServletResponse response, Model model) {
        response.setStatus(HttpStatus.CONFLICT.value());
        model.addAttribute("currentUser", ViewSupport.signedIn());
        model.addAttribute("conflict", e);
        model.addAttribute("order", orders.anyOrder(e.orderNumber()));
        model.addAttribute("reloadLink", orderPage(request, e.orderNumber()));
        return "conflict";
    }

    /** Another transaction committed between our read and our write: JPA's {@code @Version} caught it. */
    @ExceptionHandler(ObjectOptimisticLockingFailureException.class)
    String staleWrite(ObjectOptimisticLockingFailureException e, HttpServletRequest request,
                      HttpServletResponse response, Model model) {
        if (!OrderVersionCheck.isStaleWrite(e)) {
            throw e;
        }
        String number = OrderVersionCheck.orderNumberOf(e);
        // Every form that writes carries the version it showed; a missing one was refused with 400 before any write.
        long seen = FormInput.version(request.getParameter("version"));
        StaleOrderException conflict = StaleOrderException.afterStaleWrite(orders.anyOrder(number), seen, describe(request));
        return conflict(conflict, request, response, model);
    }

    @ExceptionHandler(RowLockException.class)
    String busy(RowLockException e, HttpServletRequest request, HttpServletResponse response, Model model) {
        response.setStatus(HttpStatus.CONFLICT.value());
        response.setHeader("Retry-After", "5");
        String number = String.valueOf(e.row().key());
        String why = e instanceof LockTimeoutException t
                ? "Someone else is changing order " + number + " right now; the shop waited "
                  + t.bound().toMillis() / 1000.0 + " s for them to finish."
                : "Order " + number + " was caught in a deadlock with another change.";
        return problem(model, "busy", "Order " + number + " is busy",
                why + " Nothing was changed. Reload the order to see its current state, then try again.",
                orderPage(request, number), "Reload order " + number);
    }

    @ExceptionHandler(OrderNotFoundException.class)
    String notFound(OrderNotFoundException e, HttpServletResponse response, Model model) {
        response.setStatus(HttpStatus.NOT_FOUND.value());
        return problem(model, "not-found", "No such order",
                "There is no order " + e.orderNumber() + " that you can see. Nothing was changed.", "/", "Home");
    }

    @ExceptionHandler(OrderStateException.class)
    String wrongState(OrderStateException e, HttpServletRequest request, HttpServletResponse response, Model model) {
        response.setStatus(HttpStatus.CONFLICT.value());
        return problem(model, "wrong-state", "Not possible any more", e.getMessage() + ". Nothing was changed.",
                orderPage(request, e.orderNumber()), "Back to order " + e.orderNumber());
    }

    /** A sealed invoice state that does not verify: altered, missing, another admin's or another order's. */
    @ExceptionHandler(TamperedStateException.class)
    String tampered(TamperedStateException e, HttpServletRequest request, HttpServletResponse response, Model model) {
        response.setStatus(HttpStatus.BAD_REQUEST.value());
        return problem(model, "bad-request", "The form was altered",
                "The invoice form's saved state did not verify (it was altered, damaged, missing, or prepared by "
                        + "another admin or for another order). Nothing was issued. Prepare the invoice again.",
                "/admin/orders", "All orders");
    }

    @ExceptionHandler(BadRequestException.class)
    String badRequest(BadRequestException e, HttpServletResponse response, Model model) {
        response.setStatus(HttpStatus.BAD_REQUEST.value());
        return problem(model, "bad-request", "The form was incomplete", e.getMessage(), "/", "Home");
    }

    private static String problem(Model model, String page, String title, String message, String link, String linkText) {
        model.addAttribute("currentUser", ViewSupport.signedIn());
        model.addAttribute("page", page);
        model.addAttribute("title", title);
        model.addAttribute("message", message);
        model.addAttribute("link", link);
        model.addAttribute("linkText", linkText);
        return "problem";
    }

    private static String orderPage(HttpServletRequest request, String orderNumber) {
        return (isAdminPage(request) ? "/admin/orders/" : "/my/orders/") + orderNumber;
    }

    private static boolean isAdminPage(HttpServletRequest request) {
        return request.getRequestURI().startsWith(request.getContextPath() + "/admin/");
    }

    private static String describe(HttpServletRequest request) {
        return isAdminPage(request) ? "start shipping" : "change the shipping address";
    }
}
