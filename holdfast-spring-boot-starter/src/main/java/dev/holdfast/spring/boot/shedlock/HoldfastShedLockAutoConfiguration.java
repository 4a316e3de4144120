package dev.holdfast.spring.boot.shedlock;

import dev.holdfast.lease.LeaseService;
import dev.holdfast.shedlock.HoldfastLockProvider;
import dev.holdfast.spring.boot.HoldfastAutoConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;

/**
 * A ShedLock {@link LockProvider} on Holdfast's leases ({@link HoldfastLockProvider} over the auto-configured
 * {@link LeaseService}), when ShedLock and holdfast-shedlock are on the class path and the application defines no
 * {@code LockProvider} of its own: {@code @SchedulerLock} methods and a {@code LockingTaskExecutor} then take a lease
 * named after the lock. The provider leaves the service open when the context closes it (the service is closed
 * with the context anyway).
 */
@AutoConfiguration(after = HoldfastAutoConfiguration.class)
@ConditionalOnClass({LockProvider.class, HoldfastLockProvider.class})
@ConditionalOnBooleanProperty(name = "holdfast.enabled", matchIfMissing = true)
public class HoldfastShedLockAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(LockProvider.class)
    @ConditionalOnSingleCandidate(LeaseService.class)
    HoldfastLockProvider holdfastLockProvider(LeaseService leases) {
        return new HoldfastLockProvider(leases);
    }
}
