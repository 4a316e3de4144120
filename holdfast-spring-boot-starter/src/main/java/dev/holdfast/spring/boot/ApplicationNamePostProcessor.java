package dev.holdfast.spring.boot;

import com.zaxxer.hikari.HikariDataSource;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.Ordered;

import java.util.Locale;

/**
 * Names the connections of the application's HikariCP pool from {@code holdfast.application-name},
 * so that the database's session views (and so a lock timeout's blockers) show which application a
 * session belongs to: pgjdbc's {@code ApplicationName} on PostgreSQL ({@code application_name}),
 * MariaDB Connector/J's {@code connectionAttributes=program_name:<name>} on MariaDB. Nothing on H2. A
 * name the pool's JDBC URL or data source properties already give is kept. Runs after Boot has bound
 * {@code spring.datasource.hikari.*}, before the pool opens its first connection.
 */
final class ApplicationNamePostProcessor implements BeanPostProcessor, Ordered {

    /** PostgreSQL keeps 63 bytes of an application name. */
    static final int MAX_LENGTH = 63;

    private final String name;

    /**
     * @throws IllegalArgumentException if {@code name} is blank, longer than {@value #MAX_LENGTH}
     *                                  characters, not printable ASCII, or holds {@code ,} or {@code :}
     *                                  (MariaDB's attribute syntax)
     */
    ApplicationNamePostProcessor(String name) {
        if (name.isBlank()
                || name.length() > MAX_LENGTH
                || !name.chars().allMatch(c -> c >= 0x20 && c < 0x7f)
                || name.indexOf(',') >= 0
                || name.indexOf(':') >= 0) {
            throw new IllegalArgumentException("holdfast.application-name must be 1 to " + MAX_LENGTH
                    + " printable ASCII characters without ',' or ':', not '" + name + "'");
        }
        this.name = name;
    }

    @Override
    public Object postProcessBeforeInitialization(Object bean, String beanName) {
        if (bean instanceof HikariDataSource pool && pool.getJdbcUrl() != null) {
            name(pool, pool.getJdbcUrl().toLowerCase(Locale.ROOT));
        }
        return bean;
    }

    private void name(HikariDataSource pool, String url) {
        if (url.startsWith("jdbc:postgresql:")) {
            nameUnlessNamed(pool, url, "ApplicationName", name);
        } else if (url.startsWith("jdbc:mariadb:")) {
            nameUnlessNamed(pool, url, "connectionAttributes", "program_name:" + name);
        }
    }

    private static void nameUnlessNamed(HikariDataSource pool, String url, String property, String value) {
        boolean named = url.contains(property.toLowerCase(Locale.ROOT) + "=")
                || pool.getDataSourceProperties().stringPropertyNames().stream().anyMatch(property::equalsIgnoreCase);
        if (!named) {
            pool.addDataSourceProperty(property, value);
        }
    }

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }
}
