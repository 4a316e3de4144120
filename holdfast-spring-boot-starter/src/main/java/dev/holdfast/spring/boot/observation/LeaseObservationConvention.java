package dev.holdfast.spring.boot.observation;

/** Names and tags the {@link HoldfastObservation#LEASE_ACQUIRE} observation; a bean of this type replaces the default. */
public interface LeaseObservationConvention extends HoldfastObservationConvention {

    @Override
    default HoldfastObservation observation() {
        return HoldfastObservation.LEASE_ACQUIRE;
    }
}
