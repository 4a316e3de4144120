package dev.holdfast.spring.boot.observation;

import io.micrometer.common.KeyValues;

/**
 * The default {@link HoldfastObservation#VERSION_CONFLICT} convention: named {@code holdfast.version.conflict},
 * contextual name {@code version conflict <entity>}; low cardinality {@code holdfast.technique=optimistic},
 * {@code holdfast.outcome} ({@code changed}, {@code deleted}), {@code db.system}, {@code holdfast.entity}; high
 * cardinality {@code holdfast.lock.name} ({@code entity:id}). Extend it to add or change a key.
 */
public class DefaultVersionConflictObservationConvention implements VersionConflictObservationConvention {

    @Override
    public String getName() {
        return HoldfastObservation.VERSION_CONFLICT.getName();
    }

    @Override
    public String getContextualName(HoldfastObservationContext context) {
        return "version conflict " + context.resource();
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(HoldfastObservationContext context) {
        return ConventionKeys.common(context).and(HoldfastObservation.Keys.ENTITY.withValue(context.resource()));
    }

    @Override
    public KeyValues getHighCardinalityKeyValues(HoldfastObservationContext context) {
        return ConventionKeys.lockName(context);
    }
}
