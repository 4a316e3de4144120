package dev.holdfast.spring.boot.observation;

import dev.holdfast.lease.GrantPath;
import io.micrometer.common.KeyValues;
import org.jspecify.annotations.Nullable;

import java.util.Locale;

/** The key values every default convention shares. */
final class ConventionKeys {

    private ConventionKeys() {}

    /** {@code holdfast.technique}, {@code holdfast.outcome}, {@code db.system}. */
    static KeyValues common(HoldfastObservationContext context) {
        return KeyValues.of(
                HoldfastObservation.Keys.TECHNIQUE.withValue(
                        context.observation().technique()),
                HoldfastObservation.Keys.OUTCOME.withValue(context.outcome()),
                HoldfastObservation.Keys.DATABASE.withValue(context.database()));
    }

    /** {@code holdfast.lock.name}. */
    static KeyValues lockName(HoldfastObservationContext context) {
        return KeyValues.of(HoldfastObservation.Keys.LOCK_NAME.withValue(context.lockName()));
    }

    /** A grant path as a tag value: {@code own_statement}, {@code handed_off}, {@code passed_in_memory}, {@code none}. */
    static String grant(@Nullable GrantPath path) {
        return path == null ? "none" : path.name().toLowerCase(Locale.ROOT);
    }
}
