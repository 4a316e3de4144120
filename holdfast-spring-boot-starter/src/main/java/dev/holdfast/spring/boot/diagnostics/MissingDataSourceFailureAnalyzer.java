package dev.holdfast.spring.boot.diagnostics;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;

import javax.sql.DataSource;

/**
 * Explains a start-up that failed because a Holdfast bean is missing, when the reason is that the
 * starter backed off: there is no single {@link DataSource} (the application excluded
 * {@code spring-boot-starter-jdbc}'s pool or {@code DataSourceAutoConfiguration}, or defines several
 * data sources and none is {@code @Primary}), or {@code holdfast.enabled=false}. Without it the
 * application only hears {@code No qualifying bean of type LeaseService}, far from the cause.
 *
 * <p>Registered in {@code META-INF/spring.factories}; runs before Boot's own analysis of a missing
 * bean, and leaves every other failure to it.
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
public final class MissingDataSourceFailureAnalyzer extends AbstractFailureAnalyzer<NoSuchBeanDefinitionException> {

    private static final String HOLDFAST_PACKAGE = "dev.holdfast.";

    private final @Nullable ListableBeanFactory beanFactory;
    private final @Nullable Environment environment;

    /**
     * @param beanFactory the failed application's bean factory (given by Boot), or null when Boot has none
     * @param environment the failed application's environment (given by Boot), or null when Boot has none
     */
    public MissingDataSourceFailureAnalyzer(@Nullable BeanFactory beanFactory, @Nullable Environment environment) {
        this.beanFactory = beanFactory instanceof ListableBeanFactory l ? l : null;
        this.environment = environment;
    }

    @Override
    protected @Nullable FailureAnalysis analyze(Throwable rootFailure, NoSuchBeanDefinitionException cause) {
        Class<?> missing = cause.getResolvableType() == null
                ? null
                : cause.getResolvableType().resolve();
        if (missing == null || !missing.getName().startsWith(HOLDFAST_PACKAGE) || beanFactory == null) {
            return null;
        }
        String type = missing.getSimpleName();
        if (environment != null && "false".equalsIgnoreCase(environment.getProperty("holdfast.enabled"))) {
            return new FailureAnalysis(
                    "A bean of type " + type + " is needed, but Holdfast is turned off"
                            + " (holdfast.enabled=false), so the starter configures none.",
                    "Remove holdfast.enabled=false, or define the " + type + " bean yourself.",
                    cause);
        }
        String[] dataSources = beanFactory.getBeanNamesForType(DataSource.class, true, false);
        if (dataSources.length == 0) {
            return new FailureAnalysis(
                    "A bean of type " + type + " is needed, but Holdfast needs a DataSource"
                            + " and the application has none, so the Holdfast starter configured nothing.",
                    "Holdfast needs a DataSource: add spring-boot-starter-jdbc (it brings HikariCP and Boot's"
                            + " DataSource auto-configuration; do not exclude them) and set spring.datasource.url,"
                            + " spring.datasource.username and spring.datasource.password, or define a DataSource"
                            + " bean.",
                    cause);
        }
        if (dataSources.length > 1 && !anyPrimary(dataSources)) {
            return new FailureAnalysis(
                    "A bean of type " + type + " is needed, but the application has "
                            + dataSources.length + " DataSource beans (" + String.join(", ", dataSources) + ") and none"
                            + " is primary, so the Holdfast starter did not choose one and configured nothing.",
                    "Mark the DataSource Holdfast should use @Primary, or build the Holdfast beans yourself"
                            + " from the one you choose.",
                    cause);
        }
        return null;
    }

    private boolean anyPrimary(String[] names) {
        if (!(beanFactory instanceof ConfigurableListableBeanFactory factory)) {
            return false;
        }
        for (String name : names) {
            if (factory.containsBeanDefinition(name)
                    && factory.getBeanDefinition(name).isPrimary()) {
                return true;
            }
        }
        return false;
    }
}
