package dev.holdfast.shop.web;

import dev.holdfast.shop.order.Order;
import dev.holdfast.shop.order.OrderLine;
import dev.holdfast.shop.order.ShippingInfo;
import jakarta.servlet.http.HttpServletRequest;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the user changed in a form that was refused (a version conflict, a lost edit lock, a busy
 * order), so that the refusal page shows it beside the current state and re-applies it with one
 * click. A change is a field whose typed value differs from the value the form showed (the forms
 * carry it as {@code seen-<field>}); re-applying puts exactly those changes on top of the order as
 * it is now, so nobody else's change in between is overwritten. Only the shop's own form fields are
 * kept, each at most {@value #MAX_LENGTH} characters; the page escapes them like any text.
 *
 * @param changes what the user changed, in the form's order
 * @param action  where "re-apply" sends the form
 * @param method  {@code post} to submit it again, {@code get} to open a fresh form filled with the changes
 * @param submit  every field the re-applied form carries: the changes, the current values of the
 *                other fields, and the current version (and the edit lock id) for a {@code post}
 * @param blockedBy the order's state when it no longer takes these changes (shipping has started):
 *                then the page shows them without offering to re-apply them, and says why; else null
 */
public record TypedValues(List<Field> changes, String action, String method, List<Field> submit, String blockedBy) {

    static final int MAX_LENGTH = 200;

    /** The shop's form fields and the message key of each one's label. */
    static final Map<String, String> LABELS = labels();

    /** A form field: its name, the message key of its label, and its values (several for quantities). */
    public record Field(String name, String label, List<String> values) {
        /** The values as the page shows them. */
        public String shown() {
            return String.join(", ", values);
        }
    }

    /** The changes of {@code request}, to be submitted again to where they went, on top of {@code current}. */
    static TypedValues resubmit(HttpServletRequest request, Order current) {
        List<Field> changes = new ArrayList<>();
        List<Field> submit = new ArrayList<>();
        for (Map.Entry<String, String> field : LABELS.entrySet()) {
            String name = field.getKey();
            List<String> typed = values(request, name);
            if (typed == null) {
                continue; // not a field of this form
            }
            List<String> now = currentValues(current, name);
            List<String> seen = values(request, "seen-" + name);
            boolean changed = !typed.equals(seen != null ? seen : now);
            Field kept = new Field(name, field.getValue(), changed ? typed : now);
            if (changed) {
                changes.add(kept);
            }
            submit.add(kept);
            submit.add(new Field("seen-" + name, field.getValue(), now));
        }
        submit.add(new Field("version", "", List.of(Long.toString(current.getVersion()))));
        String lockId = request.getParameter("lockId");
        if (lockId != null) {
            submit.add(new Field("lockId", "", List.of(clip(lockId))));
        }
        return new TypedValues(List.copyOf(changes), request.getRequestURI(), "post", List.copyOf(submit), null)
                .checkedAgainst(current);
    }

    /**
     * The changes of {@code request}, to open a fresh form at {@code formPath} filled with them, unless
     * {@code current} (the order as it is now) no longer takes them.
     */
    static TypedValues reopen(HttpServletRequest request, String formPath, Order current) {
        List<Field> changes = new ArrayList<>();
        for (Map.Entry<String, String> field : LABELS.entrySet()) {
            List<String> typed = values(request, field.getKey());
            List<String> seen = values(request, "seen-" + field.getKey());
            if (typed != null && !typed.equals(seen)) {
                changes.add(new Field(field.getKey(), field.getValue(), typed));
            }
        }
        return new TypedValues(
                        List.copyOf(changes), request.getContextPath() + formPath, "get", List.copyOf(changes), null)
                .checkedAgainst(current);
    }

    /**
     * These changes, marked as blocked if {@code current} no longer takes them: every form whose
     * changes are kept (the shipping form, the edit page) changes only an order whose shipping has not
     * started, so re-applying could only end in "not possible any more".
     */
    private TypedValues checkedAgainst(Order current) {
        return current.isShippingChangeable()
                ? this
                : new TypedValues(
                        changes, action, method, submit, current.getState().name());
    }

    /** True if the changes can be re-applied (the page offers the button). */
    public boolean isReapplicable() {
        return blockedBy == null;
    }

    /** True if nothing was changed (then the page offers nothing to re-apply). */
    public boolean isEmpty() {
        return changes.isEmpty();
    }

    static List<String> values(HttpServletRequest request, String name) {
        String[] values = request.getParameterValues(name);
        if (values == null || values.length == 0 || values.length > 50) {
            return null;
        }
        return Arrays.stream(values).map(TypedValues::clip).toList();
    }

    static List<String> currentValues(Order order, String name) {
        ShippingInfo info = order.getShippingInfo();
        return switch (name) {
            case "receiverName" -> List.of(info.receiver().name());
            case "receiverPhone" -> List.of(info.receiver().phone());
            case "zipCode" -> List.of(info.address().zipCode());
            case "address1" -> List.of(info.address().address1());
            case "address2" ->
                List.of(info.address().address2() == null ? "" : info.address().address2());
            case "quantity" ->
                order.getLines().stream()
                        .map(OrderLine::quantity)
                        .map(String::valueOf)
                        .toList();
            default -> throw new IllegalArgumentException("not a form field: " + name);
        };
    }

    private static String clip(String value) {
        return value.length() <= MAX_LENGTH ? value : value.substring(0, MAX_LENGTH);
    }

    private static Map<String, String> labels() {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put("receiverName", "shipping.receiver");
        labels.put("receiverPhone", "shipping.phone");
        labels.put("zipCode", "shipping.zip");
        labels.put("address1", "shipping.address1");
        labels.put("address2", "shipping.address2");
        labels.put("quantity", "col.quantity");
        return Collections.unmodifiableMap(labels);
    }
}
