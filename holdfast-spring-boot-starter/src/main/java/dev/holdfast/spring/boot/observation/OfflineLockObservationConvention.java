package dev.holdfast.spring.boot.observation;

/** Names and tags the {@link HoldfastObservation#OFFLINE_LOCK} observation; a bean of this type replaces the default. */
public interface OfflineLockObservationConvention extends HoldfastObservationConvention {

    @Override
    default HoldfastObservation observation() {
        return HoldfastObservation.OFFLINE_LOCK;
    }
}
