package dev.holdfast.spring.boot.actuate;

import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.lease.LeaseView;
import dev.holdfast.pessimistic.RowLockWaits;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.spring.boot.HoldfastAutoConfiguration;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;

import javax.sql.DataSource;

/**
 * The Actuator endpoint {@code holdfast} ({@link HoldfastEndpoint}), when Spring Boot Actuator is on
 * the class path and the endpoint is available: exposed over the web only where the application
 * says so ({@code management.endpoints.web.exposure.include=holdfast}), as every endpoint but
 * health. Each section shows what the application has: the auto-configured {@link JdbcLockManager}
 * and {@link LeaseService}, and the lock waits of its single {@link DataSource}.
 */
@AutoConfiguration(after = HoldfastAutoConfiguration.class)
@ConditionalOnClass(
        name = {
            "org.springframework.boot.actuate.endpoint.annotation.Endpoint",
            "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint"
        })
@ConditionalOnBooleanProperty(name = "holdfast.enabled", matchIfMissing = true)
public class HoldfastEndpointAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnAvailableEndpoint
    HoldfastEndpoint holdfastEndpoint(
            ObjectProvider<JdbcLockManager> locks,
            ObjectProvider<LeaseService> leases,
            ObjectProvider<DataSource> dataSource,
            ObjectProvider<Dialect> dialect) {
        DataSource pool = dataSource.getIfUnique();
        Dialect d = dialect.getIfUnique();
        LeaseService leaseService = leases.getIfUnique();
        DataSource plain = pool == null ? null : nonTransactional(pool);
        return new HoldfastEndpoint(
                locks.getIfUnique(),
                leaseService,
                leaseService == null || plain == null ? null : LeaseView.of(plain, leaseService),
                d == null || plain == null ? null : RowLockWaits.of(d, plain));
    }

    /** The pool behind {@code dataSource}: reading the views needs no caller's transaction. */
    private static DataSource nonTransactional(DataSource dataSource) {
        DataSource ds = dataSource;
        while (ds instanceof TransactionAwareDataSourceProxy proxy && proxy.getTargetDataSource() != null) {
            ds = proxy.getTargetDataSource();
        }
        return ds;
    }
}
