package dev.holdfast.benchmarks;

import dev.holdfast.lease.LeaseService;
import dev.holdfast.lease.internal.LeaseProbe;
import dev.holdfast.lease.internal.LeaseTuning;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.function.UnaryOperator;

/**
 * Benchmarks: a service's probe and its builder's tuning, which are package-private in {@link LeaseService} so
 * that no public signature names an internal type. Reached by reflection, here only: a benchmark class in
 * {@code dev.holdfast.lease} calling them would break the architecture rule that benchmarks use only the public
 * and the declared internal API ({@code dev.holdfast.lease.internal}, whose {@link LeaseProbe} and
 * {@link LeaseTuning} they use as before).
 */
final class LeaseInternals {

    private static final Method PROBE = accessible(LeaseService.class, "probe");
    private static final Method TUNE = accessible(LeaseService.Builder.class, "tune", UnaryOperator.class);

    private LeaseInternals() {}

    /** {@return what {@code service}'s parts counted ({@code LeaseService.probe()})} */
    static LeaseProbe probe(LeaseService service) {
        return (LeaseProbe) invoke(PROBE, service);
    }

    /** {@return {@code builder}, its tuning changed by {@code change} ({@code LeaseService.Builder.tune})} */
    static LeaseService.Builder tune(LeaseService.Builder builder, UnaryOperator<LeaseTuning> change) {
        return (LeaseService.Builder) invoke(TUNE, builder, change);
    }

    private static Method accessible(Class<?> type, String name, Class<?>... parameters) {
        try {
            Method m = type.getDeclaredMethod(name, parameters);
            m.setAccessible(true);
            return m;
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(type.getName() + "." + name + " is gone: update LeaseInternals", e);
        }
    }

    private static Object invoke(Method m, Object target, Object... arguments) {
        try {
            return m.invoke(target, arguments);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException(e.getCause());
        }
    }
}
