package dev.holdfast.shop.web;

import dev.holdfast.spring.boot.web.LockProblem;
import dev.holdfast.spring.boot.web.OfflineLockExceptionHandler;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.web.bind.annotation.ControllerAdvice;

import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * holdfast-spring-boot's lock problem handler (409 for lock conflicts and lost locks, 400 for a bad
 * lock id; problem+json for JSON clients) with what the shop's {@code lock-problem} page needs besides
 * the problem: the signed-in user, the expiry in the shop's time zone, and a link back to the order.
 */
@ControllerAdvice
class ShopLockProblemHandler extends OfflineLockExceptionHandler {

    private static final Pattern ORDER_PAGE = Pattern.compile("^/admin/orders/([A-Za-z0-9-]{1,32})(/|$)");

    private final ViewSupport.Formats formats;

    ShopLockProblemHandler(@Value("${holdfast.web.lock-problem-view:lock-problem}") String view, ViewSupport.Formats formats) {
        super(view);
        this.formats = formats;
    }

    @Override
    protected void addToModel(Map<String, Object> model, LockProblem problem, HttpServletRequest request) {
        model.put("currentUser", ViewSupport.signedIn());
        model.put("until", problem.expiresAt() == null ? null : formats.clock(problem.expiresAt()));
        Matcher m = ORDER_PAGE.matcher(request.getRequestURI().substring(request.getContextPath().length()));
        model.put("orderLink", m.find() ? "/admin/orders/" + m.group(1) : "/admin/orders");
    }
}
