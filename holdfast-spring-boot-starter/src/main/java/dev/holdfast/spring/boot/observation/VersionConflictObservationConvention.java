package dev.holdfast.spring.boot.observation;

/** Names and tags the {@link HoldfastObservation#VERSION_CONFLICT} observation; a bean of this type replaces the default. */
public interface VersionConflictObservationConvention extends HoldfastObservationConvention {

    @Override
    default HoldfastObservation observation() {
        return HoldfastObservation.VERSION_CONFLICT;
    }
}
