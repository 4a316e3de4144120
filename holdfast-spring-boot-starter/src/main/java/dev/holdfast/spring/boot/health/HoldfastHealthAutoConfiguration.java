package dev.holdfast.spring.boot.health;

import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.spring.boot.HoldfastAutoConfiguration;
import dev.holdfast.spring.boot.HoldfastProperties;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;

import java.util.Map;
import javax.sql.DataSource;

/**
 * The {@code holdfast} health indicator ({@link HoldfastHealthIndicator}), with Spring Boot's health
 * support on the class path (Actuator brings it); {@code management.health.holdfast.enabled=false} turns
 * it off.
 */
@AutoConfiguration(after = HoldfastAutoConfiguration.class)
@ConditionalOnClass(
        name = {
            "org.springframework.boot.health.contributor.HealthIndicator",
            "org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator"
        })
@ConditionalOnSingleCandidate(DataSource.class)
@ConditionalOnBean({Dialect.class, HoldfastProperties.class})
@ConditionalOnBooleanProperty(name = "holdfast.enabled", matchIfMissing = true)
public class HoldfastHealthAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "holdfastHealthIndicator")
    @ConditionalOnEnabledHealthIndicator("holdfast")
    HoldfastHealthIndicator holdfastHealthIndicator(
            DataSource dataSource,
            Dialect dialect,
            HoldfastProperties properties,
            ObjectProvider<LeaseService> leases) {
        DataSource pool = dataSource;
        while (pool instanceof TransactionAwareDataSourceProxy proxy && proxy.getTargetDataSource() != null) {
            pool = proxy.getTargetDataSource(); // the check needs no caller's transaction
        }
        return new HoldfastHealthIndicator(
                pool,
                dialect,
                Map.of(
                        HoldfastTable.OFFLINE_LOCKS, properties.getOffline().getTable(),
                        HoldfastTable.LEASES, properties.getLease().getTable()),
                leases.getIfUnique());
    }
}
