package dev.holdfast.spring.boot.schema;

import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.spring.boot.HoldfastAutoConfiguration;
import dev.holdfast.spring.boot.HoldfastProperties;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;

import java.util.Locale;
import java.util.Map;
import javax.sql.DataSource;

/**
 * The start-up check of Holdfast's tables ({@link HoldfastSchemaVerifier}), wherever the starter
 * configures Holdfast; {@code holdfast.jdbc.schema-check=false} turns it off.
 */
@AutoConfiguration(after = HoldfastAutoConfiguration.class)
@ConditionalOnSingleCandidate(DataSource.class)
@ConditionalOnBean({Dialect.class, HoldfastProperties.class})
@ConditionalOnBooleanProperty(name = "holdfast.enabled", matchIfMissing = true)
@ConditionalOnBooleanProperty(name = "holdfast.jdbc.schema-check", matchIfMissing = true)
public class HoldfastSchemaCheckAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    HoldfastSchemaVerifier holdfastSchemaVerifier(
            DataSource dataSource, Dialect dialect, HoldfastProperties properties) {
        return new HoldfastSchemaVerifier(
                pool(dataSource),
                dialect,
                Map.of(
                        HoldfastTable.OFFLINE_LOCKS, properties.getOffline().getTable(),
                        HoldfastTable.LEASES, properties.getLease().getTable()),
                properties.getJdbc().getInitializeSchema().name().toLowerCase(Locale.ROOT));
    }

    /** The pool behind a {@link TransactionAwareDataSourceProxy}: the check needs no caller's transaction. */
    private static DataSource pool(DataSource dataSource) {
        DataSource ds = dataSource;
        while (ds instanceof TransactionAwareDataSourceProxy proxy && proxy.getTargetDataSource() != null) {
            ds = proxy.getTargetDataSource();
        }
        return ds;
    }
}
