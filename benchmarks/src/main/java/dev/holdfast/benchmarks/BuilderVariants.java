package dev.holdfast.benchmarks;

import dev.holdfast.lease.LeaseService;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * Lease service configurations named on the command line and looked up by name at run time, so
 * that one harness runs on any branch whatever its batching API is called: {@code
 * label=builder} (the builder's defaults, untouched), or {@code label=batching:ALT|ALT…}, the
 * first alternative that exists on this build, each one of:
 * <ul>
 *   <li>{@code NAME}: the constant (static field or no-argument static method) {@code Batching.NAME};</li>
 *   <li>{@code NAME(duration)}: the static method {@code Batching.NAME(Duration)}, the duration as
 *       {@code 300us}, {@code 0.3ms}, {@code 1ms}, {@code 2s} or ISO-8601 ({@code PT0.001S});</li>
 *   <li>{@code true} or {@code false}: a {@code batching(boolean)} builder method.</li>
 * </ul>
 * The value goes to the builder's one-argument {@code batching} method that takes it. A variant none
 * of whose alternatives exists is left out, with a line saying so.
 */
final class BuilderVariants {

    /** Unbatched first (the yardstick), then the builder's default, then batching on. */
    static final String DEFAULTS = "unbatched=batching:OFF,default=builder,batched=batching:ON|CONCURRENT";

    /** A label, what it was resolved from, and how it changes a builder. */
    record Variant(String label, String resolved, UnaryOperator<LeaseService.Builder> configure) {}

    private BuilderVariants() {}

    /** The variants of {@code specs} ({@code label=expression,…}) that exist on this build. */
    static List<Variant> resolve(String specs) {
        List<Variant> variants = new ArrayList<>();
        for (String spec : specs.split(",")) {
            String[] labelled = spec.trim().split("=", 2);
            if (labelled.length != 2 || labelled[0].isBlank()) {
                throw new IllegalArgumentException("A variant is label=expression, not " + spec);
            }
            Optional<Variant> variant = resolve(labelled[0].trim(), labelled[1].trim());
            if (variant.isPresent()) {
                variants.add(variant.get());
            } else {
                System.out.printf("variant %s: none of %s exists on this build, left out%n", labelled[0], labelled[1]);
            }
        }
        return variants;
    }

    static Optional<Variant> resolve(String label, String expression) {
        if (expression.equals("builder")) {
            return Optional.of(new Variant(label, "builder defaults", UnaryOperator.identity()));
        }
        if (!expression.startsWith("batching:")) {
            throw new IllegalArgumentException("A variant is builder or batching:ALT|ALT…, not " + expression);
        }
        for (String alternative : expression.substring("batching:".length()).split("\\|")) {
            Optional<Object> value = batchingValue(alternative.trim());
            if (value.isEmpty()) {
                continue;
            }
            Optional<Method> setter = setter(value.get());
            if (setter.isPresent()) {
                Method method = setter.get();
                Object argument = value.get();
                return Optional.of(new Variant(label, "batching(" + alternative.trim() + ")", b -> {
                    try {
                        return (LeaseService.Builder) method.invoke(b, argument);
                    } catch (ReflectiveOperationException e) {
                        throw new IllegalStateException(e);
                    }
                }));
            }
        }
        return Optional.empty();
    }

    /** What {@code alternative} names on this build, if it exists. */
    private static Optional<Object> batchingValue(String alternative) {
        if (alternative.equals("true") || alternative.equals("false")) {
            return Optional.of(Boolean.valueOf(alternative));
        }
        Class<?> batching;
        try {
            batching = Class.forName("dev.holdfast.lease.Batching");
        } catch (ClassNotFoundException e) {
            return Optional.empty();
        }
        try {
            int open = alternative.indexOf('(');
            if (open > 0 && alternative.endsWith(")")) {
                Method factory = batching.getMethod(alternative.substring(0, open), Duration.class);
                return Optional.of(
                        factory.invoke(null, duration(alternative.substring(open + 1, alternative.length() - 1))));
            }
            try {
                Field constant = batching.getField(alternative);
                if (Modifier.isStatic(constant.getModifiers())) {
                    return Optional.of(constant.get(null));
                }
            } catch (NoSuchFieldException e) {
                Method factory = batching.getMethod(alternative);
                if (Modifier.isStatic(factory.getModifiers())) {
                    return Optional.of(factory.invoke(null));
                }
            }
        } catch (ReflectiveOperationException e) {
            return Optional.empty();
        }
        return Optional.empty();
    }

    /** The builder's {@code batching} method that takes {@code value}. */
    private static Optional<Method> setter(Object value) {
        for (Method m : LeaseService.Builder.class.getMethods()) {
            if (m.getName().equals("batching") && m.getParameterCount() == 1) {
                Class<?> type = m.getParameterTypes()[0];
                if (type.isInstance(value) || (type == boolean.class && value instanceof Boolean)) {
                    return Optional.of(m);
                }
            }
        }
        return Optional.empty();
    }

    /** {@code 300us}, {@code 0.3ms}, {@code 1ms}, {@code 2s}, or ISO-8601. */
    static Duration duration(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        if (t.startsWith("pt")) {
            return Duration.parse(text.trim());
        }
        double nanosPer;
        String number;
        if (t.endsWith("us")) {
            nanosPer = 1e3;
            number = t.substring(0, t.length() - 2);
        } else if (t.endsWith("ms")) {
            nanosPer = 1e6;
            number = t.substring(0, t.length() - 2);
        } else if (t.endsWith("s")) {
            nanosPer = 1e9;
            number = t.substring(0, t.length() - 1);
        } else {
            throw new IllegalArgumentException("A duration is like 300us, 0.3ms, 1ms, 2s or PT0.001S, not " + text);
        }
        return Duration.ofNanos(Math.round(Double.parseDouble(number) * nanosPer));
    }

    /** What the service says its batching is ({@code batching()}), or "?" if it has no such method. */
    static String batchingOf(LeaseService service) {
        try {
            return String.valueOf(LeaseService.class.getMethod("batching").invoke(service));
        } catch (ReflectiveOperationException e) {
            return "?";
        }
    }

    /** A counter of the service's probe by name ({@code batchedCalls}, …), or -1 if this build has none. */
    static long probe(LeaseService service, String counter) {
        try {
            Object probe = LeaseService.class.getMethod("probe").invoke(service);
            return ((Number) probe.getClass().getMethod(counter).invoke(probe)).longValue();
        } catch (ReflectiveOperationException | RuntimeException e) {
            return -1;
        }
    }
}
