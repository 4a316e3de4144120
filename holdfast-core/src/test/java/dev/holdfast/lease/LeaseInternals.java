package dev.holdfast.lease;

import dev.holdfast.lease.internal.LeaseProbe;
import dev.holdfast.lease.internal.LeaseTuning;

import java.util.function.UnaryOperator;

/**
 * Tests outside this package: a service's probe and its builder's tuning, which are package-private in
 * {@link LeaseService} so that no public signature names an internal type. This class shares the package only
 * in the test sources; the published jar has no such route.
 */
public final class LeaseInternals {

    private LeaseInternals() {}

    /** {@return what {@code service}'s parts counted ({@code LeaseService.probe()})} */
    public static LeaseProbe probe(LeaseService service) {
        return service.probe();
    }

    /** {@return {@code builder}, its tuning changed by {@code change} ({@code LeaseService.Builder.tune})} */
    public static LeaseService.Builder tune(LeaseService.Builder builder, UnaryOperator<LeaseTuning> change) {
        return builder.tune(change);
    }
}
