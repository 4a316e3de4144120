package dev.holdfast.spring.boot.observation;

import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.lease.GrantListener;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.spring.boot.HoldfastAutoConfiguration;
import dev.holdfast.spring.boot.LeasesDecorator;
import dev.holdfast.spring.boot.LockManagerDecorator;
import dev.holdfast.spring.boot.metrics.HoldfastMetricsAutoConfiguration;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.core.annotation.Order;

/**
 * Micrometer observations of Holdfast ({@link HoldfastObservation}), when micrometer-observation is on the class
 * path and the application has an {@link ObservationRegistry} (Boot's {@code ObservationAutoConfiguration} makes
 * one): {@link PessimisticLockObservations} observing the {@code PessimisticLocks} bean, {@link ObservedLeases}
 * around the calls of the {@link LeaseService} (whose grants it tags through {@link ObservedLeases#grantListener})
 * and {@link ObservedLockManager} around those of the {@link JdbcLockManager} (as a {@link LeasesDecorator} and a
 * {@link LockManagerDecorator}: the bean is observed whichever of its types is injected), and
 * {@link VersionConflictObservations}. A bean of a convention type ({@link PessimisticLockObservationConvention},
 * …) replaces that default convention.
 *
 * <p>With the metrics ({@link HoldfastMetricsAutoConfiguration}) on too, the meters wrap the observations: every
 * call is counted once by the meters and observed once. {@code holdfast.observations.enabled=false} turns it off.
 */
@AutoConfiguration(
        after = {HoldfastAutoConfiguration.class, HoldfastMetricsAutoConfiguration.class},
        afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass(ObservationRegistry.class)
@ConditionalOnBean(ObservationRegistry.class)
@ConditionalOnBooleanProperty(name = "holdfast.observations.enabled", matchIfMissing = true)
public class HoldfastObservationAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnSingleCandidate(Dialect.class)
    PessimisticLockObservations holdfastPessimisticLockObservations(
            ObservationRegistry registry,
            Dialect dialect,
            ObjectProvider<PessimisticLockObservationConvention> convention) {
        return new PessimisticLockObservations(registry, dialect, convention.getIfUnique());
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnSingleCandidate(Dialect.class)
    VersionConflictObservations holdfastVersionConflictObservations(
            ObservationRegistry registry,
            Dialect dialect,
            ObjectProvider<VersionConflictObservationConvention> convention) {
        return new VersionConflictObservations(registry, dialect, convention.getIfUnique());
    }

    /** Tells the lease observation in scope how its grant came; the auto-configured {@link LeaseService} calls it. */
    @Bean
    @ConditionalOnMissingBean(GrantListener.class)
    GrantListener holdfastLeaseGrantListener(ObservationRegistry registry) {
        return ObservedLeases.grantListener(registry);
    }

    @Bean
    @Order(LeasesDecorator.OBSERVATIONS_ORDER)
    @ConditionalOnSingleCandidate(Dialect.class)
    @ConditionalOnMissingBean(name = "holdfastObservedLeases")
    LeasesDecorator holdfastObservedLeases(
            ObservationRegistry registry, Dialect dialect, ObjectProvider<LeaseObservationConvention> convention) {
        LeaseObservationConvention custom = convention.getIfUnique();
        return leases -> new ObservedLeases(leases, registry, dialect, custom);
    }

    @Bean
    @Order(LeasesDecorator.OBSERVATIONS_ORDER)
    @ConditionalOnSingleCandidate(Dialect.class)
    @ConditionalOnMissingBean(name = "holdfastObservedLockManager")
    LockManagerDecorator holdfastObservedLockManager(
            ObservationRegistry registry,
            Dialect dialect,
            ObjectProvider<OfflineLockObservationConvention> convention) {
        OfflineLockObservationConvention custom = convention.getIfUnique();
        return locks -> new ObservedLockManager(locks, registry, dialect, custom);
    }
}
