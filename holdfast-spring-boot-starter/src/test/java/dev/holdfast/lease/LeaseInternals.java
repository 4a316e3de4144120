package dev.holdfast.lease;

import dev.holdfast.lease.internal.LeaseProbe;

/**
 * The starter's tests: a service's probe, which is package-private in {@link LeaseService} so that no public
 * signature names an internal type. This class shares the package only in the test sources; the published jars
 * have no such route.
 */
public final class LeaseInternals {

    private LeaseInternals() {}

    /** {@return what {@code service}'s parts counted ({@code LeaseService.probe()})} */
    public static LeaseProbe probe(LeaseService service) {
        return service.probe();
    }
}
