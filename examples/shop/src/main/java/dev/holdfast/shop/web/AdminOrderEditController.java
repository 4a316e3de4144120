package dev.holdfast.shop.web;

import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.pessimistic.offline.Reacquired;
import dev.holdfast.shop.order.Order;
import dev.holdfast.shop.order.OrderService;
import dev.holdfast.shop.order.Receiver;
import dev.holdfast.spring.boot.OfflineLockLostException;
import dev.holdfast.spring.boot.web.LockHeartbeat;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.servlet.mvc.support.RedirectAttributes;

import java.security.Principal;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Scenario 3: an admin edits an order under an offline lock. Opening the page takes the lock (a second
 * admin gets "being edited by …"); the {@link LockId} travels in a hidden field; the page's heartbeat
 * extends it; saving checks it is still this admin's live lock on this order, then releases it.
 * Lock refusals are rendered by holdfast-spring-boot-starter's handler ({@link ShopLockProblemHandler}).
 */
@Controller
@RequestMapping("/admin/orders/{orderNumber}/edit")
class AdminOrderEditController {

    private final OrderService orders;
    private final LockHeartbeat heartbeat;
    private final Texts texts;
    private final ViewSupport.Formats formats;

    AdminOrderEditController(OrderService orders, LockHeartbeat heartbeat, Texts texts, ViewSupport.Formats formats) {
        this.texts = texts;
        this.formats = formats;
        this.orders = orders;
        this.heartbeat = heartbeat;
    }

    /**
     * Opens the edit page with the edit lock; {@code receiverName}, {@code receiverPhone} and
     * {@code quantity}, if given, fill the form instead of the order's values (re-applying changes
     * whose save was refused).
     */
    @GetMapping
    String edit(
            @PathVariable String orderNumber,
            @RequestParam(required = false) String receiverName,
            @RequestParam(required = false) String receiverPhone,
            @RequestParam(name = "quantity", required = false) List<String> quantities,
            Principal admin,
            Model model) {
        String number = FormInput.orderNumber(orderNumber);
        // The grant this admin held before (if any) tells a reload of the same tab from a second tab: a
        // reacquire starts a new grant (new id, new acquiredAt), and each tab remembers its own grant.
        Optional<LockHeartbeat.LockStatus> before = heartbeat
                .status(OrderService.EDIT_LOCK_TYPE, number)
                .filter(s -> admin.getName().equals(s.owner()));
        Reacquired lock = orders.startEditing(admin.getName(), number);
        Order order = orders.anyOrder(number);
        model.addAttribute("order", order);
        model.addAttribute("lockId", lock.lockId().getValue());
        model.addAttribute("otherTab", lock.replaced());
        model.addAttribute(
                "replacedGrant",
                lock.replaced() ? before.map(s -> s.acquiredAt().toString()).orElse("") : null);
        model.addAttribute("prefill", EditPrefill.of(receiverName, receiverPhone, quantities));
        Optional<LockHeartbeat.LockStatus> now = heartbeat.status(OrderService.EDIT_LOCK_TYPE, number);
        model.addAttribute("lock", now.orElse(null));
        model.addAttribute("grant", now.map(s -> s.acquiredAt().toString()).orElse(""));
        model.addAttribute("heartbeatSeconds", heartbeat.interval().toSeconds());
        return "admin-order-edit";
    }

    @PostMapping
    String save(
            @PathVariable String orderNumber,
            @RequestParam LockId lockId,
            @RequestParam(required = false) String version,
            @RequestParam(required = false) String receiverName,
            @RequestParam(required = false) String receiverPhone,
            @RequestParam(name = "quantity", required = false) List<String> quantities,
            Principal admin,
            RedirectAttributes redirect) {
        String number = FormInput.orderNumber(orderNumber);
        long seenVersion = FormInput.version(version);
        Receiver receiver =
                new Receiver(FormInput.text("receiver", receiverName, 100), FormInput.text("phone", receiverPhone, 40));
        List<Integer> parsed = new ArrayList<>();
        for (String q : quantities == null ? List.<String>of() : quantities) {
            parsed.add(FormInput.quantity(q));
        }
        if (parsed.size() != orders.anyOrder(number).getLines().size()) {
            throw new BadRequestException(
                    "bad.quantity-count",
                    parsed.size(),
                    orders.anyOrder(number).getLines().size());
        }
        orders.edit(admin.getName(), number, lockId, seenVersion, receiver, parsed);
        release(admin, lockId);
        Notices.success(redirect, texts.html("edit.saved", number));
        return "redirect:/admin/orders/" + number;
    }

    @PostMapping("/cancel")
    String cancel(
            @PathVariable String orderNumber,
            @RequestParam LockId lockId,
            Principal admin,
            RedirectAttributes redirect) {
        String number = FormInput.orderNumber(orderNumber);
        boolean released = release(admin, lockId);
        Notices.success(redirect, texts.html(released ? "edit.cancelled" : "edit.cancelled-not-held", number));
        return "redirect:/admin/orders/" + number;
    }

    /** The page's heartbeat ({@code /holdfast/heartbeat.js}): extends this admin's lock on this order. */
    @PostMapping("/heartbeat")
    ResponseEntity<?> heartbeat(
            @PathVariable String orderNumber, @RequestParam(required = false) String lockId, Principal admin) {
        // The new expiry (and a lost lock's end) formatted like every time on the page: the viewer's zone
        // and language, the UTC time on hover unless the viewer is in UTC.
        ResponseEntity<?> answer = heartbeat.extend(
                lockId,
                OrderService.EDIT_LOCK_TYPE,
                FormInput.orderNumber(orderNumber),
                admin.getName(),
                formats::clock,
                formats::utcHint);
        if (answer.getBody() instanceof ProblemDetail problem) {
            explain(problem);
        }
        return answer;
    }

    /**
     * A lock that ended names who ended it and when, in the viewer's zone and language, as the refused
     * save does: the page's script shows the detail of a code it has no text of its own for (the edit
     * page gives none for these codes, whose texts need the names and times).
     */
    private void explain(ProblemDetail problem) {
        Map<String, Object> properties = problem.getProperties() == null ? Map.of() : problem.getProperties();
        Object code = properties.get("code");
        Object endedAt = properties.get("endedAt");
        if (code == null || endedAt == null) {
            return;
        }
        String by = properties.get("endedBy") instanceof String name ? name : texts.get("heartbeat.an-administrator");
        String at;
        try {
            at = formats.clock(Instant.parse(endedAt.toString()));
        } catch (DateTimeParseException e) {
            return;
        }
        String reason = texts.getOrNull("heartbeat.ended." + code, by, at);
        if (reason != null) {
            problem.setDetail(reason);
        }
    }

    /** Releases the lock if it is still this admin's; a lock already lost needs no release. */
    private boolean release(Principal admin, LockId lockId) {
        try {
            orders.stopEditing(admin.getName(), lockId);
            return true;
        } catch (OfflineLockLostException e) { // the starter's lock manager throws Spring's exceptions
            return false;
        }
    }
}
