package dev.holdfast.shop.order;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What changed an order (its last change) or what a user attempted, recorded as a message code with
 * arguments instead of English words, so every page renders it in the viewer's language. Control
 * characters separate the parts; any control character in user data is replaced by a space. Composite
 * arguments (order lines, shipping info) keep their parts, so pages join them in the viewer's language.
 */
public final class ChangeText {

    /** Starts every recorded text. */
    public static final String MARK = "\u001E";

    private static final String ARG = "\u001F";
    private static final String LINES = "\u001D";
    private static final String LINE = "\u001C";
    private static final String SHIPPING = "\u001A";

    private ChangeText() {}

    /** {@code code} is a message code (e.g. {@code change.address}); arguments are shown as they are. */
    public static String of(String code, Object... args) {
        StringBuilder out = new StringBuilder(MARK).append(code);
        for (Object arg : args) {
            String text = String.valueOf(arg);
            boolean encoded = arg instanceof ShippingInfo || isLines(text); // their parts are cleaned
            out.append(ARG).append(arg instanceof ShippingInfo info ? shipping(info) : encoded ? text : clean(text));
        }
        return out.toString();
    }

    /** An argument listing order lines with their quantities (shown as "Pan × 2, Towel × 3"). */
    public static String lines(List<OrderLine> lines) {
        StringBuilder out = new StringBuilder(LINES);
        for (int i = 0; i < lines.size(); i++) {
            if (i > 0) {
                out.append(LINE);
            }
            out.append(clean(lines.get(i).productName()))
                    .append(LINE)
                    .append(lines.get(i).quantity());
        }
        return out.toString();
    }

    /**
     * An argument holding shipping info as its parts (receiver, phone, postal code, address lines), so
     * that each page joins them into one line in the viewer's language ({@code shipping.one-line}).
     */
    public static String shipping(ShippingInfo info) {
        Address a = info.address();
        return SHIPPING
                + String.join(
                        LINE,
                        clean(info.receiver().name()),
                        clean(info.receiver().phone()),
                        clean(a.zipCode()),
                        clean(a.address1()),
                        a.address2() == null ? "" : clean(a.address2()));
    }

    public static boolean isShipping(String arg) {
        return arg.startsWith(SHIPPING);
    }

    /** The shipping info of an argument made by {@link #shipping(ShippingInfo)}. */
    public static ShippingInfo shipping(String arg) {
        String[] p = arg.substring(SHIPPING.length()).split(LINE, -1);
        if (p.length != 5) {
            throw new IllegalArgumentException("not a shipping argument");
        }
        return new ShippingInfo(new Receiver(p[0], p[1]), new Address(p[2], p[3], p[4].isEmpty() ? null : p[4]));
    }

    /** The code followed by the arguments; a text recorded otherwise is returned as its only element. */
    public static List<String> parse(String recorded) {
        if (!recorded.startsWith(MARK)) {
            return List.of(recorded);
        }
        return Arrays.asList(recorded.substring(MARK.length()).split(ARG, -1));
    }

    public static boolean isLines(String arg) {
        return arg.startsWith(LINES);
    }

    /** Pairs of product name and quantity from an argument made by {@link #lines(List)}. */
    public static List<String[]> lines(String arg) {
        String[] parts = arg.substring(LINES.length()).split(LINE, -1);
        List<String[]> out = new ArrayList<>();
        for (int i = 0; i + 1 < parts.length; i += 2) {
            out.add(new String[] {parts[i], parts[i + 1]});
        }
        return out;
    }

    private static String clean(String s) {
        return s.replaceAll("[\\u0000-\\u001F]", " ");
    }
}
