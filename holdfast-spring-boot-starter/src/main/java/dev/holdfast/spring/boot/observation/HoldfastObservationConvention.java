package dev.holdfast.spring.boot.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * A convention for one of Holdfast's observations; implement the interface of the observation you rename or tag
 * differently ({@link PessimisticLockObservationConvention}, {@link OfflineLockObservationConvention},
 * {@link LeaseObservationConvention}, {@link VersionConflictObservationConvention}), or extend its default.
 */
public interface HoldfastObservationConvention extends ObservationConvention<HoldfastObservationContext> {

    /** {@return the observation this convention names} */
    HoldfastObservation observation();

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof HoldfastObservationContext c && c.observation() == observation();
    }
}
