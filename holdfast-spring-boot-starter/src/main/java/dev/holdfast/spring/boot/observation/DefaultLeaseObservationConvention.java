package dev.holdfast.spring.boot.observation;

import io.micrometer.common.KeyValues;

/**
 * The default {@link HoldfastObservation#LEASE_ACQUIRE} convention: named {@code holdfast.lease.acquire}, contextual
 * name {@code lease <operation>}; low cardinality {@code holdfast.technique=lease}, {@code holdfast.operation},
 * {@code holdfast.outcome}, {@code db.system}, {@code holdfast.lease.grant}; high cardinality
 * {@code holdfast.lock.name} (the lease name). Extend it to add or change a key.
 */
public class DefaultLeaseObservationConvention implements LeaseObservationConvention {

    @Override
    public String getName() {
        return HoldfastObservation.LEASE_ACQUIRE.getName();
    }

    @Override
    public String getContextualName(HoldfastObservationContext context) {
        return "lease " + context.operation();
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(HoldfastObservationContext context) {
        return ConventionKeys.common(context)
                .and(
                        HoldfastObservation.Keys.OPERATION.withValue(context.operation()),
                        HoldfastObservation.Keys.GRANT.withValue(ConventionKeys.grant(context.grant())));
    }

    @Override
    public KeyValues getHighCardinalityKeyValues(HoldfastObservationContext context) {
        return ConventionKeys.lockName(context);
    }
}
