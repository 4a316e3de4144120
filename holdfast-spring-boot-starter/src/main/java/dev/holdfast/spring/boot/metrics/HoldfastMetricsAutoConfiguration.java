package dev.holdfast.spring.boot.metrics;

import dev.holdfast.lease.LeaseService;
import dev.holdfast.lease.Leases;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.pessimistic.offline.LockManager;
import dev.holdfast.pessimistic.PessimisticLocks;
import dev.holdfast.spring.boot.HoldfastAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;

/**
 * Micrometer metrics for Holdfast, when micrometer-core is on the class path and the application has
 * a {@link MeterRegistry}: a {@link MeteredLockManager} around the auto-configured
 * {@link JdbcLockManager} (the {@code @Primary} {@link LockManager}; inject {@code JdbcLockManager}
 * for the operator calls), {@link PessimisticLockMetrics} observing {@link PessimisticLocks},
 * {@link MeteredLeases} around the {@link LeaseService} (the {@code @Primary} {@link dev.holdfast.lease.Leases}),
 * {@link LeaseBatchingMetrics} of that service's batching and cohort hand-off, and the {@link VersionConflictCounter}.
 * {@code holdfast.metrics.enabled=false} turns it off.
 */
@AutoConfiguration(after = HoldfastAutoConfiguration.class, afterName = {
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration"})
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean(MeterRegistry.class)
@ConditionalOnBooleanProperty(name = "holdfast.metrics.enabled", matchIfMissing = true)
public class HoldfastMetricsAutoConfiguration {

    @Bean
    @Primary
    @ConditionalOnSingleCandidate(JdbcLockManager.class)
    @ConditionalOnMissingBean(MeteredLockManager.class)
    MeteredLockManager holdfastMeteredLockManager(JdbcLockManager lockManager, MeterRegistry registry,
            @Qualifier("holdfastObservedLockManager") ObjectProvider<LockManager> observed) {
        // with observations on, meter the observed lock manager: each call counted once and observed once
        return new MeteredLockManager(observed.getIfAvailable(() -> lockManager), registry, lockManager);
    }

    @Bean
    @Primary
    @ConditionalOnSingleCandidate(LeaseService.class)
    @ConditionalOnMissingBean(MeteredLeases.class)
    MeteredLeases holdfastMeteredLeases(LeaseService leases, MeterRegistry registry,
            @Qualifier("holdfastObservedLeases") ObjectProvider<Leases> observed) {
        return new MeteredLeases(observed.getIfAvailable(() -> leases), registry);
    }

    @Bean
    @ConditionalOnSingleCandidate(LeaseService.class)
    @ConditionalOnMissingBean
    LeaseBatchingMetrics holdfastLeaseBatchingMetrics(LeaseService leases, MeterRegistry registry) {
        LeaseBatchingMetrics metrics = new LeaseBatchingMetrics(leases);
        metrics.bindTo(registry); // also bound where Boot binds MeterBinder beans: registering a meter again keeps the first
        return metrics;
    }

    @Bean
    @ConditionalOnMissingBean
    VersionConflictCounter holdfastVersionConflictCounter(MeterRegistry registry) {
        return new VersionConflictCounter(registry);
    }

    @Bean
    @ConditionalOnMissingBean(PessimisticLocks.Observer.class)
    PessimisticLockMetrics holdfastPessimisticLockMetrics(MeterRegistry registry) {
        return new PessimisticLockMetrics(registry);
    }
}
