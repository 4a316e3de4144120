package dev.holdfast.spring.boot.web;

import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.pessimistic.offline.LockManager;
import dev.holdfast.spring.boot.HoldfastAutoConfiguration;
import dev.holdfast.spring.boot.HoldfastProperties;
import dev.holdfast.spring.boot.VersionConflictListener;
import dev.holdfast.spring.boot.metrics.HoldfastMetricsAutoConfiguration;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.format.FormatterRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

import java.util.List;
import javax.sql.DataSource;

/**
 * Spring MVC helpers for offline locks in a servlet web application: {@link dev.holdfast.pessimistic.offline.LockId LockId} binding
 * ({@link LockIdConverter}), {@link OfflineLockExceptionHandler}, {@link VersionConflictExceptionHandler}
 * (version conflicts, {@link ClientVersion}, tampered states), and {@link LockHeartbeat} for the
 * static script {@code /holdfast/heartbeat.js} this module ships.
 *
 * @see dev.holdfast.pessimistic.offline.LockId
 */
@AutoConfiguration(after = {HoldfastAutoConfiguration.class, HoldfastMetricsAutoConfiguration.class})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(WebMvcConfigurer.class)
@ConditionalOnBean(LockManager.class)
public class HoldfastWebAutoConfiguration {

    @Bean
    WebMvcConfigurer holdfastLockIdBinding() {
        return new WebMvcConfigurer() {
            @Override
            public void addFormatters(FormatterRegistry registry) {
                registry.addConverter(new LockIdConverter());
            }
        };
    }

    @Bean
    @ConditionalOnMissingBean
    OfflineLockExceptionHandler holdfastOfflineLockExceptionHandler(HoldfastProperties properties) {
        return new OfflineLockExceptionHandler(properties.getWeb().getLockProblemView());
    }

    @Bean
    @ConditionalOnMissingBean
    VersionConflictExceptionHandler holdfastVersionConflictExceptionHandler(
            HoldfastProperties properties, ObjectProvider<VersionConflictListener> listener) {
        List<VersionConflictListener> listeners = listener.orderedStream().toList();
        return new VersionConflictExceptionHandler(
                properties.getWeb().getConflictView(),
                listeners.isEmpty() ? null : conflict -> listeners.forEach(l -> l.onConflict(conflict)));
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnSingleCandidate(JdbcLockManager.class)
    LockHeartbeat holdfastLockHeartbeat(
            LockManager locks, JdbcLockManager store, DataSource dataSource, HoldfastProperties properties) {
        return new LockHeartbeat(locks, store, dataSource, properties.getWeb().getHeartbeatInterval());
    }
}
