package dev.holdfast.spring.boot;

import dev.holdfast.jdbc.dialect.Dialect;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings under {@code holdfast.*}.
 */
@ConfigurationProperties("holdfast")
public class HoldfastProperties {

    /** Whether Holdfast configures itself from the application's DataSource. */
    private boolean enabled = true;

    /**
     * The database dialect: H2, POSTGRESQL or MARIADB. Empty (the default) detects it from the
     * DataSource, which borrows one connection at startup.
     */
    private Dialect dialect;

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public Dialect getDialect() {
        return dialect;
    }

    public void setDialect(Dialect dialect) {
        this.dialect = dialect;
    }
}
