package dev.holdfast.spring.boot.schema;

import org.springframework.boot.sql.init.dependency.AbstractBeansOfTypeDatabaseInitializerDetector;
import org.springframework.boot.sql.init.dependency.DatabaseInitializerDetector;
import org.springframework.core.Ordered;

import java.util.Set;

/**
 * Makes {@link HoldfastSchemaVerifier} a step of Boot's database initialization, the last one: it
 * runs after every other initializer (whose detectors come earlier) and before every bean that
 * depends on database initialization, such as the lock manager and the lease service. Registered in
 * {@code META-INF/spring.factories} as a {@link DatabaseInitializerDetector}.
 */
public class HoldfastSchemaVerifierDetector extends AbstractBeansOfTypeDatabaseInitializerDetector {

    @Override
    protected Set<Class<?>> getDatabaseInitializerBeanTypes() {
        return Set.of(HoldfastSchemaVerifier.class);
    }

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }
}
