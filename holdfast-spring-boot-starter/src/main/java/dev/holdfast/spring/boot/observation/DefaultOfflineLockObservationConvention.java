package dev.holdfast.spring.boot.observation;

import io.micrometer.common.KeyValues;

/**
 * The default {@link HoldfastObservation#OFFLINE_LOCK} convention: named {@code holdfast.offline.lock}, contextual
 * name {@code offline lock <type>}; low cardinality {@code holdfast.technique=offline}, {@code holdfast.operation},
 * {@code holdfast.outcome}, {@code db.system}, {@code holdfast.lock.type}; high cardinality {@code holdfast.lock.name}
 * ({@code type:id}). Extend it to add or change a key.
 */
public class DefaultOfflineLockObservationConvention implements OfflineLockObservationConvention {

    @Override
    public String getName() {
        return HoldfastObservation.OFFLINE_LOCK.getName();
    }

    @Override
    public String getContextualName(HoldfastObservationContext context) {
        return "offline lock " + context.resource();
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(HoldfastObservationContext context) {
        return ConventionKeys.common(context)
                .and(
                        HoldfastObservation.Keys.OPERATION.withValue(context.operation()),
                        HoldfastObservation.Keys.LOCK_TYPE.withValue(context.resource()));
    }

    @Override
    public KeyValues getHighCardinalityKeyValues(HoldfastObservationContext context) {
        return ConventionKeys.lockName(context);
    }
}
