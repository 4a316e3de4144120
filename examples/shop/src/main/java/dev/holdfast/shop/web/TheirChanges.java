package dev.holdfast.shop.web;

import dev.holdfast.shop.order.Order;
import jakarta.servlet.http.HttpServletRequest;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What someone else changed in an order while this user looked at it: every field whose value the
 * refused form showed (its {@code seen-<field>} values) differs from the order now, old and new. The
 * conflict page lists these instead of the other change's whole record, which names every field of an
 * edit, changed or not. Empty when the form showed no such field, or none of them changed.
 *
 * @param changes the changed fields, in the form's order
 */
public record TheirChanges(List<Change> changes) {

    /**
     * One changed field.
     *
     * @param name     the field, e.g. {@code receiverPhone} or {@code quantity-0} (the first line's quantity)
     * @param label    the message key of its label
     * @param labelArg the label's argument (a line's product name), or null
     * @param before   the value this user saw ("" for an empty one)
     * @param after    the value now
     */
    public record Change(String name, String label, String labelArg, String before, String after) {}

    /** The fields of {@code current} that differ from what {@code request}'s form showed. */
    static TheirChanges of(HttpServletRequest request, Order current) {
        List<Change> changes = new ArrayList<>();
        if (!"POST".equals(request.getMethod())) {
            return new TheirChanges(List.of());
        }
        for (Map.Entry<String, String> field : TypedValues.LABELS.entrySet()) {
            String name = field.getKey();
            List<String> seen = TypedValues.values(request, "seen-" + name);
            if (seen == null) {
                continue; // the form did not show this field
            }
            List<String> now = TypedValues.currentValues(current, name);
            if ("quantity".equals(name) && seen.size() == now.size()) {
                // One entry per order line that changed, named by its product.
                for (int i = 0; i < now.size(); i++) {
                    if (!seen.get(i).equals(now.get(i))) {
                        changes.add(new Change(
                                "quantity-" + i,
                                "conflict.their.quantity",
                                current.getLines().get(i).productName(),
                                seen.get(i),
                                now.get(i)));
                    }
                }
            } else if (!seen.equals(now)) {
                changes.add(new Change(name, field.getValue(), null, String.join(", ", seen), String.join(", ", now)));
            }
        }
        return new TheirChanges(List.copyOf(changes));
    }

    /** True if no field the form showed was changed (then the page describes the other change as recorded). */
    public boolean isEmpty() {
        return changes.isEmpty();
    }
}
