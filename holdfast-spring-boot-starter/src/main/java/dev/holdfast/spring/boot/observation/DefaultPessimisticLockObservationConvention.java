package dev.holdfast.spring.boot.observation;

import io.micrometer.common.KeyValues;

/**
 * The default {@link HoldfastObservation#PESSIMISTIC_LOCK} convention: named {@code holdfast.pessimistic.lock},
 * contextual name {@code lock <table>}; low cardinality {@code holdfast.technique=pessimistic},
 * {@code holdfast.outcome}, {@code db.system}, {@code holdfast.table}, {@code holdfast.lock.wait}; high cardinality
 * {@code holdfast.lock.name} (the row). Extend it to add or change a key.
 */
public class DefaultPessimisticLockObservationConvention implements PessimisticLockObservationConvention {

    @Override
    public String getName() {
        return HoldfastObservation.PESSIMISTIC_LOCK.getName();
    }

    @Override
    public String getContextualName(HoldfastObservationContext context) {
        return "lock " + context.resource();
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(HoldfastObservationContext context) {
        return ConventionKeys.common(context)
                .and(
                        HoldfastObservation.Keys.TABLE.withValue(context.resource()),
                        HoldfastObservation.Keys.WAIT.withValue(context.operation()));
    }

    @Override
    public KeyValues getHighCardinalityKeyValues(HoldfastObservationContext context) {
        return ConventionKeys.lockName(context);
    }
}
