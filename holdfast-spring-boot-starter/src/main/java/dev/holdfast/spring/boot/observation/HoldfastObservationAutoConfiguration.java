package dev.holdfast.spring.boot.observation;

import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.lease.GrantListener;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.spring.boot.HoldfastAutoConfiguration;
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
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;

/**
 * Micrometer observations of Holdfast ({@link HoldfastObservation}), when micrometer-observation is on the class
 * path and the application has an {@link ObservationRegistry} (Boot's {@code ObservationAutoConfiguration} makes
 * one): {@link PessimisticLockObservations} observing the {@code PessimisticLocks} bean, {@link ObservedLeases}
 * around the {@link LeaseService} (whose grants it tags through {@link ObservedLeases#grantListener}),
 * {@link ObservedLockManager} around the {@link JdbcLockManager}, and {@link VersionConflictObservations}. A bean of
 * a convention type ({@link PessimisticLockObservationConvention}, …) replaces that default convention.
 *
 * <p>With the metrics ({@link HoldfastMetricsAutoConfiguration}) on too, the metered decorators stay the
 * {@code @Primary} {@code Leases} and {@code LockManager} and wrap the observed ones: every call is counted once by
 * the meters and observed once. {@code holdfast.observations.enabled=false} turns it off.
 */
@AutoConfiguration(after = {HoldfastAutoConfiguration.class, HoldfastMetricsAutoConfiguration.class},
        afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass(ObservationRegistry.class)
@ConditionalOnBean(ObservationRegistry.class)
@ConditionalOnBooleanProperty(name = "holdfast.observations.enabled", matchIfMissing = true)
public class HoldfastObservationAutoConfiguration {

    static final String METERED_LEASES = "dev.holdfast.spring.boot.metrics.MeteredLeases";
    static final String METERED_LOCK_MANAGER = "dev.holdfast.spring.boot.metrics.MeteredLockManager";

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnSingleCandidate(Dialect.class)
    PessimisticLockObservations holdfastPessimisticLockObservations(ObservationRegistry registry, Dialect dialect,
            ObjectProvider<PessimisticLockObservationConvention> convention) {
        return new PessimisticLockObservations(registry, dialect, convention.getIfUnique());
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnSingleCandidate(Dialect.class)
    VersionConflictObservations holdfastVersionConflictObservations(ObservationRegistry registry, Dialect dialect,
            ObjectProvider<VersionConflictObservationConvention> convention) {
        return new VersionConflictObservations(registry, dialect, convention.getIfUnique());
    }

    /** Tells the lease observation in scope how its grant came; the auto-configured {@link LeaseService} calls it. */
    @Bean
    @ConditionalOnMissingBean(GrantListener.class)
    GrantListener holdfastLeaseGrantListener(ObservationRegistry registry) {
        return ObservedLeases.grantListener(registry);
    }

    /** Without metered leases: the observed leases are the {@code @Primary} {@code Leases}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnSingleCandidate(LeaseService.class)
    @ConditionalOnMissingBean(type = METERED_LEASES, value = ObservedLeases.class)
    static class PrimaryObservedLeases {

        @Bean
        @Primary
        ObservedLeases holdfastObservedLeases(LeaseService leases, ObservationRegistry registry,
                                              ObjectProvider<LeaseObservationConvention> convention) {
            return new ObservedLeases(leases, registry, leases.dialect(), convention.getIfUnique());
        }
    }

    /** With metered leases: the observed leases are what they meter (they find this bean by its name). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnSingleCandidate(LeaseService.class)
    @ConditionalOnBean(type = METERED_LEASES)
    @ConditionalOnMissingBean(ObservedLeases.class)
    static class MeteredObservedLeases {

        @Bean
        ObservedLeases holdfastObservedLeases(LeaseService leases, ObservationRegistry registry,
                                              ObjectProvider<LeaseObservationConvention> convention) {
            return new ObservedLeases(leases, registry, leases.dialect(), convention.getIfUnique());
        }
    }

    /** Without a metered lock manager: the observed one is the {@code @Primary} {@code LockManager}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnSingleCandidate(JdbcLockManager.class)
    @ConditionalOnMissingBean(type = METERED_LOCK_MANAGER, value = ObservedLockManager.class)
    static class PrimaryObservedLockManager {

        @Bean
        @Primary
        ObservedLockManager holdfastObservedLockManager(JdbcLockManager locks, ObservationRegistry registry,
                                                        ObjectProvider<OfflineLockObservationConvention> convention) {
            return new ObservedLockManager(locks, registry, locks.dialect(), convention.getIfUnique());
        }
    }

    /** With a metered lock manager: the observed one is what it meters (it finds this bean by its name). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnSingleCandidate(JdbcLockManager.class)
    @ConditionalOnBean(type = METERED_LOCK_MANAGER)
    @ConditionalOnMissingBean(ObservedLockManager.class)
    static class MeteredObservedLockManager {

        @Bean
        ObservedLockManager holdfastObservedLockManager(JdbcLockManager locks, ObservationRegistry registry,
                                                        ObjectProvider<OfflineLockObservationConvention> convention) {
            return new ObservedLockManager(locks, registry, locks.dialect(), convention.getIfUnique());
        }
    }
}
