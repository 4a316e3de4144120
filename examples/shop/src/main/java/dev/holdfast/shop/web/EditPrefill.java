package dev.holdfast.shop.web;

import org.jspecify.annotations.Nullable;

import java.util.List;

/**
 * Values that fill the admin's edit form instead of the order's own: what the admin typed before a
 * save was refused. Only shown in the form: the save checks them like anything typed.
 */
public record EditPrefill(
        @Nullable String receiverName, @Nullable String receiverPhone, List<String> quantities) {

    static EditPrefill of(
            @Nullable String receiverName, @Nullable String receiverPhone, @Nullable List<String> quantities) {
        return new EditPrefill(
                clip(receiverName),
                clip(receiverPhone),
                quantities == null
                        ? List.of()
                        : quantities.stream().limit(50).map(EditPrefill::clip).toList());
    }

    /** The typed quantity of line {@code index}, or {@code fallback}. */
    public String quantity(int index, int fallback) {
        return index < quantities.size() && quantities.get(index) != null
                ? quantities.get(index)
                : Integer.toString(fallback);
    }

    private static @Nullable String clip(@Nullable String value) {
        return value == null || value.length() <= TypedValues.MAX_LENGTH
                ? value
                : value.substring(0, TypedValues.MAX_LENGTH);
    }
}
