package dev.holdfast.spring.boot.observation;

/** Names and tags the {@link HoldfastObservation#PESSIMISTIC_LOCK} observation; a bean of this type replaces the default. */
public interface PessimisticLockObservationConvention extends HoldfastObservationConvention {

    @Override
    default HoldfastObservation observation() {
        return HoldfastObservation.PESSIMISTIC_LOCK;
    }
}
