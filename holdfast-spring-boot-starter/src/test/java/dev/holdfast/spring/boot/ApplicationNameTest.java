package dev.holdfast.spring.boot;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code holdfast.application-name} names the connections of Boot's HikariCP pool, unless they are named already. */
class ApplicationNameTest {

    private static ApplicationContextRunner boot(TestDatabase db, String url) {
        return new ApplicationContextRunner()
                .withConfiguration(
                        AutoConfigurations.of(DataSourceAutoConfiguration.class, HoldfastAutoConfiguration.class))
                .withPropertyValues(
                        "spring.datasource.url=" + url,
                        "spring.datasource.username=" + db.kind().user(),
                        "spring.datasource.password=" + db.kind().password(),
                        "holdfast.jdbc.initialize-schema=never",
                        "spring.datasource.hikari.maximum-pool-size=2");
    }

    @DatabaseTest
    void theNameReachesTheDatabase(TestDatabase db) {
        boot(db, db.kind().url())
                .withPropertyValues("holdfast.application-name=holdfast-it")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    HikariDataSource pool = context.getBean(HikariDataSource.class);
                    switch (db.kind()) {
                        case POSTGRESQL -> assertThat(applicationName(pool)).isEqualTo("holdfast-it");
                        // MariaDB keeps connection attributes in performance_schema only (off here): the pool carries
                        // it
                        case MARIADB ->
                            assertThat(pool.getDataSourceProperties())
                                    .containsEntry("connectionAttributes", "program_name:holdfast-it");
                        case H2 -> assertThat(pool.getDataSourceProperties()).isEmpty();
                    }
                });
    }

    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void aNameTheUrlGivesIsKeptAndNoPropertyNamesNothing(TestDatabase db) {
        String url = db.kind().url() + (db.kind().url().contains("?") ? "&" : "?") + "ApplicationName=own-name";
        boot(db, url)
                .withPropertyValues("holdfast.application-name=holdfast-it")
                .run(context -> assertThat(applicationName(context.getBean(HikariDataSource.class)))
                        .isEqualTo("own-name"));
        boot(db, db.kind().url())
                .run(context -> assertThat(
                                context.getBean(HikariDataSource.class).getDataSourceProperties())
                        .isEmpty());
    }

    @Test
    void aNameThatCannotBeSentIsRefused() {
        assertThatThrownBy(() -> new ApplicationNamePostProcessor("a,b"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("holdfast.application-name");
        assertThatThrownBy(() -> new ApplicationNamePostProcessor("x".repeat(64)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ApplicationNamePostProcessor(" ")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ApplicationNamePostProcessor("쇼핑")).isInstanceOf(IllegalArgumentException.class);
    }

    private static String applicationName(HikariDataSource pool) throws Exception {
        try (Connection c = pool.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT current_setting('application_name')")) {
            rs.next();
            return rs.getString(1);
        }
    }
}
