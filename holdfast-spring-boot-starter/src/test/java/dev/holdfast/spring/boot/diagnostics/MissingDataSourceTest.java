package dev.holdfast.spring.boot.diagnostics;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.pessimistic.offline.LockManager;
import dev.holdfast.spring.boot.HoldfastAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.core.io.DefaultResourceLoader;

import java.util.UUID;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What the starter needs to configure Holdfast: with {@code spring.datasource.url} and an H2 driver,
 * Boot's DataSource auto-configuration and the pool that {@code spring-boot-starter-jdbc} (a dependency
 * of the starter) brings give every Holdfast bean; an application that took the pool away fails its
 * start with a report that says what to add, not with a bare "No qualifying bean".
 */
@ExtendWith(OutputCaptureExtension.class)
class MissingDataSourceTest {

    private static String h2Url() {
        return "jdbc:h2:mem:starter-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
    }

    @Test
    void aDatasourceUrlIsAllTheStarterNeedsForItsBeans() {
        new ApplicationContextRunner()
                .withConfiguration(
                        AutoConfigurations.of(DataSourceAutoConfiguration.class, HoldfastAutoConfiguration.class))
                .withPropertyValues("spring.datasource.url=" + h2Url())
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(DataSource.class)).isInstanceOf(HikariDataSource.class);
                    assertThat(context).hasSingleBean(LeaseService.class).hasSingleBean(LockManager.class);
                });
    }

    /** An application that uses Holdfast. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        String nightlyReport(LeaseService leases) {
            return "report run under " + leases;
        }
    }

    private static SpringApplication app(ClassLoader classLoader) {
        SpringApplication application = new SpringApplication(new DefaultResourceLoader(classLoader), App.class);
        application.setDefaultProperties(java.util.Map.of(
                "spring.main.web-application-type",
                "none",
                "spring.flyway.enabled",
                "false",
                "spring.liquibase.enabled",
                "false"));
        return application;
    }

    @Test
    void withoutAPoolTheStartFailsSayingWhatToAdd(CapturedOutput output) {
        SpringApplication application = app(new FilteredClassLoader(HikariDataSource.class));

        assertThatThrownBy(
                () -> application.run("--spring.datasource.url=" + h2Url()).close());

        assertThat(output)
                .contains("Holdfast needs a DataSource and the application has none")
                .contains("add spring-boot-starter-jdbc")
                .contains("spring.datasource.url")
                .doesNotContain("Consider defining a bean of type");
    }

    @Test
    void turnedOffTheStartFailsSayingSo(CapturedOutput output) {
        SpringApplication application = app(getClass().getClassLoader());

        assertThatThrownBy(() -> application
                .run("--spring.datasource.url=" + h2Url(), "--holdfast.enabled=false")
                .close());

        assertThat(output).contains("Holdfast is turned off (holdfast.enabled=false)");
    }
}
