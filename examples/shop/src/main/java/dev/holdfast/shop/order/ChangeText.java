package dev.holdfast.shop.order;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What changed an order (its last change) or what a user attempted, recorded as a message code with
 * arguments instead of English words, so every page renders it in the viewer's language. Control
 * characters separate the parts; they cannot come from a form (the shop's inputs are text fields).
 */
public final class ChangeText {

    /** Starts every recorded text. */
    public static final String MARK = "\u001E";
    private static final String ARG = "\u001F";
    private static final String LINES = "\u001D";
    private static final String LINE = "\u001C";

    private ChangeText() {
    }

    /** {@code code} is a message code (e.g. {@code change.address}); arguments are shown as they are. */
    public static String of(String code, Object... args) {
        StringBuilder out = new StringBuilder(MARK).append(code);
        for (Object arg : args) {
            String text = String.valueOf(arg);
            out.append(ARG).append(isLines(text) ? text : clean(text)); // lines(...) cleaned its names
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
            out.append(clean(lines.get(i).productName())).append(LINE).append(lines.get(i).quantity());
        }
        return out.toString();
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
        return s.replaceAll("[\\u001C-\\u001F]", " ");
    }
}
