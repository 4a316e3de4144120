package dev.holdfast.spring.boot.metrics;

import dev.holdfast.lease.LeaseService;
import dev.holdfast.pessimistic.PessimisticLocks;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.spring.boot.HoldfastAutoConfiguration;
import dev.holdfast.spring.boot.LeasesDecorator;
import dev.holdfast.spring.boot.LockManagerDecorator;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.observation.MeterObservationHandler;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.core.annotation.Order;
import org.springframework.util.ClassUtils;

/**
 * Micrometer metrics for Holdfast, when micrometer-core is on the class path and the application has
 * a {@link MeterRegistry}: a {@link MeteredLockManager} around the calls of the auto-configured
 * {@link JdbcLockManager} and {@link MeteredLeases} around those of the {@link LeaseService} (as a
 * {@link LockManagerDecorator} and a {@link LeasesDecorator}: the bean is metered whichever of its types is
 * injected), {@link PessimisticLockMetrics} observing {@link PessimisticLocks}, and, as {@link MeterBinder}s that
 * Boot binds to its registries, the held offline locks ({@link MeteredLockManager#heldLocks}) and
 * {@link LeaseBatchingMetrics} of the service's batching and cohort hand-off; the {@link VersionConflictCounter}.
 * {@code holdfast.metrics.enabled=false} turns it off.
 */
@AutoConfiguration(
        after = HoldfastAutoConfiguration.class,
        afterName = {
            "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration"
        })
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean(MeterRegistry.class)
@ConditionalOnBooleanProperty(name = "holdfast.metrics.enabled", matchIfMissing = true)
public class HoldfastMetricsAutoConfiguration {

    private static final String OBSERVATIONS = "dev.holdfast.spring.boot.observation.PessimisticLockObservations";

    @Bean
    @Order(LeasesDecorator.METRICS_ORDER)
    @ConditionalOnMissingBean(name = "holdfastMeteredLockManager")
    LockManagerDecorator holdfastMeteredLockManager(MeterRegistry registry) {
        return locks -> new MeteredLockManager(locks, registry, null);
    }

    @Bean
    @ConditionalOnSingleCandidate(JdbcLockManager.class)
    @ConditionalOnMissingBean(name = "holdfastOfflineLocksHeld")
    MeterBinder holdfastOfflineLocksHeld(JdbcLockManager lockManager) {
        return MeteredLockManager.heldLocks(lockManager);
    }

    @Bean
    @Order(LeasesDecorator.METRICS_ORDER)
    @ConditionalOnMissingBean(name = "holdfastMeteredLeases")
    LeasesDecorator holdfastMeteredLeases(MeterRegistry registry) {
        return leases -> new MeteredLeases(leases, registry);
    }

    /** Bound by Boot, as every {@link MeterBinder} bean (binding it here too would register its meters twice). */
    @Bean
    @ConditionalOnSingleCandidate(LeaseService.class)
    @ConditionalOnMissingBean
    LeaseBatchingMetrics holdfastLeaseBatchingMetrics(LeaseService leases) {
        return new LeaseBatchingMetrics(leases);
    }

    @Bean
    @ConditionalOnMissingBean
    VersionConflictCounter holdfastVersionConflictCounter(MeterRegistry registry) {
        return new VersionConflictCounter(registry);
    }

    /**
     * Untimed where Holdfast's observation of each row lock reaches a meter handler (Boot's, with metrics and
     * observations both): that handler's timer is the one timing of the call.
     */
    @Bean
    @ConditionalOnMissingBean(PessimisticLocks.Observer.class)
    PessimisticLockMetrics holdfastPessimisticLockMetrics(
            MeterRegistry registry,
            ListableBeanFactory beans,
            ObjectProvider<MeterObservationHandler<?>> meterHandlers) {
        // by name: the observation package refers to this one, not the other way round
        ClassLoader loader = getClass().getClassLoader();
        boolean observed = ClassUtils.isPresent(OBSERVATIONS, loader)
                && beans.getBeanNamesForType(ClassUtils.resolveClassName(OBSERVATIONS, loader), false, false).length
                        > 0;
        return new PessimisticLockMetrics(
                registry, !(observed && meterHandlers.stream().findAny().isPresent()));
    }
}
