package dev.holdfast.shop.web;

import dev.holdfast.shop.order.OrderService;
import dev.holdfast.spring.boot.web.LockProblem;
import dev.holdfast.spring.boot.web.OfflineLockExceptionHandler;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.MessageSource;
import org.springframework.context.i18n.LocaleContextHolder;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.web.bind.annotation.ControllerAdvice;

import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * holdfast-spring-boot-starter's lock problem handler (409 for lock conflicts and lost locks, 400 for a bad
 * lock id; problem+json for JSON clients) with what the shop's {@code lock-problem} page needs besides
 * the problem: the signed-in user, the expiry in the viewer's time zone, a link back to the order, and
 * the problem's title and detail in the viewer's language ({@code lock-problem.<code>.*} in the message
 * bundles; a code without a text there keeps the library's English words).
 *
 * <p>First among the shop's advice: the starter's lock manager throws Spring's exceptions (an
 * {@code OfflineLockHeldException} is a {@code PessimisticLockingFailureException}), and Spring asks each advice in
 * order, so {@link ShopExceptionHandler}'s handler of locking failures would otherwise take them.
 */
@ControllerAdvice
@Order(Ordered.HIGHEST_PRECEDENCE)
class ShopLockProblemHandler extends OfflineLockExceptionHandler {

    private static final Pattern ORDER_PAGE = Pattern.compile("^/admin/orders/([A-Za-z0-9-]{1,32})(/|$)");

    private final ViewSupport.Formats formats;
    private final MessageSource messages;
    private final OrderService orders;

    ShopLockProblemHandler(
            @Value("${holdfast.web.lock-problem-view:lock-problem}") String view,
            ViewSupport.Formats formats,
            MessageSource messages,
            OrderService orders) {
        super(view);
        this.orders = orders;
        this.formats = formats;
        this.messages = messages;
    }

    @Override
    protected void addToModel(Map<String, Object> model, LockProblem problem, HttpServletRequest request) {
        model.put("currentUser", ViewSupport.signedIn());
        model.put("until", problem.expiresAt() == null ? null : formats.clock(problem.expiresAt()));
        model.put("untilUtc", problem.expiresAt() == null ? null : formats.utc(problem.expiresAt()));
        Matcher m = ORDER_PAGE.matcher(
                request.getRequestURI().substring(request.getContextPath().length()));
        String orderNumber = m.find() ? m.group(1) : null;
        model.put("orderLink", orderNumber != null ? "/admin/orders/" + orderNumber : "/admin/orders");
        // A save refused because its lock is gone: keep what was typed, to open the edit page again with it.
        if (orderNumber != null
                && "POST".equals(request.getMethod())
                && request.getRequestURI().endsWith("/edit")
                && problem.status() == 409
                && !"already-locked".equals(problem.code())) {
            try {
                model.put(
                        "typed",
                        TypedValues.reopen(
                                request, "/admin/orders/" + orderNumber + "/edit", orders.anyOrder(orderNumber)));
            } catch (dev.holdfast.shop.order.OrderNotFoundException e) {
                // no such order: nothing to open again
            }
        }
        Locale locale = LocaleContextHolder.getLocale();
        String who =
                problem.owner() != null ? problem.owner() : messages.getMessage("lock-problem.someone", null, locale);
        String endedBy = problem.endedBy() != null
                ? problem.endedBy()
                : messages.getMessage("lock-problem.an-administrator", null, locale);
        Object[] args = {
            who,
            orderNumber == null ? "" : orderNumber,
            model.get("until"),
            endedBy,
            problem.endedAt() == null ? "" : formats.clock(problem.endedAt())
        };
        model.put(
                "problemTitle",
                messages.getMessage("lock-problem." + problem.code() + ".title", args, problem.title(), locale));
        model.put(
                "problemDetail",
                messages.getMessage("lock-problem." + problem.code() + ".detail", args, problem.detail(), locale));
        // The same as HTML, its times as <time> elements like every time on the page, the rest escaped.
        Object[] html = {
            formats.html(who),
            formats.html(args[1]),
            problem.expiresAt() == null ? "" : formats.clockHtml(problem.expiresAt()),
            formats.html(endedBy),
            problem.endedAt() == null ? "" : formats.clockHtml(problem.endedAt())
        };
        model.put(
                "problemDetailHtml",
                messages.getMessage(
                        "lock-problem." + problem.code() + ".detail", html, formats.html(problem.detail()), locale));
    }
}
