package dev.holdfast.spring.boot;

import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.pessimistic.PessimisticLocks;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

import javax.sql.DataSource;

/**
 * Configures Holdfast from the application's single {@link DataSource}: the {@link Dialect} (detected,
 * or {@code holdfast.dialect}), {@link PessimisticLocks}, and a {@link HoldfastExceptionTranslator}.
 * Every bean backs off when the application defines its own; {@code holdfast.enabled=false} turns
 * all of it off.
 */
@AutoConfiguration(afterName = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
@ConditionalOnSingleCandidate(DataSource.class)
@ConditionalOnBooleanProperty(name = "holdfast.enabled", matchIfMissing = true)
@EnableConfigurationProperties(HoldfastProperties.class)
public class HoldfastAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    Dialect holdfastDialect(DataSource dataSource, HoldfastProperties properties) {
        return properties.getDialect() != null ? properties.getDialect() : Dialect.detect(dataSource);
    }

    @Bean
    @ConditionalOnMissingBean
    PessimisticLocks holdfastPessimisticLocks(Dialect dialect) {
        return PessimisticLocks.of(dialect);
    }

    @Bean
    @ConditionalOnMissingBean
    static HoldfastExceptionTranslator holdfastExceptionTranslator() {
        return new HoldfastExceptionTranslator();
    }
}
