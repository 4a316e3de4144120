package dev.holdfast.spring.boot;

import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.pessimistic.PessimisticLocks;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.datasource.AbstractDataSource;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.util.UUID;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;

class HoldfastAutoConfigurationTest {

    private final ApplicationContextRunner runner =
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(HoldfastAutoConfiguration.class));

    private static DataSource h2() {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:autoconfig-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        return ds;
    }

    /** A DataSource that must never be asked for a connection. */
    private static DataSource unreachable() {
        return new AbstractDataSource() {
            @Override
            public Connection getConnection() {
                throw new AssertionError("no connection expected");
            }

            @Override
            public Connection getConnection(String username, String password) {
                throw new AssertionError("no connection expected");
            }
        };
    }

    @Test
    void detectsTheDialectAndProvidesLocksAndTranslator() {
        runner.withBean(DataSource.class, HoldfastAutoConfigurationTest::h2).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(Dialect.class)).isEqualTo(Dialect.H2);
            assertThat(context.getBean(PessimisticLocks.class).dialect()).isEqualTo(Dialect.H2);
            assertThat(context).hasSingleBean(HoldfastExceptionTranslator.class);
        });
    }

    @Test
    void lockTimeoutsNameTheirBlockersUnlessSwitchedOff() {
        runner.withBean(DataSource.class, HoldfastAutoConfigurationTest::h2)
                .run(context -> assertThat(
                                context.getBean(PessimisticLocks.class).namesBlockers())
                        .isTrue());
        runner.withBean(DataSource.class, HoldfastAutoConfigurationTest::h2)
                .withPropertyValues("holdfast.pessimistic.name-blockers=false")
                .run(context -> assertThat(
                                context.getBean(PessimisticLocks.class).namesBlockers())
                        .isFalse());
    }

    @Test
    void worksAfterBootsOwnDataSourceAutoConfiguration() {
        new ApplicationContextRunner()
                .withConfiguration(
                        AutoConfigurations.of(DataSourceAutoConfiguration.class, HoldfastAutoConfiguration.class))
                .withPropertyValues("spring.datasource.url=jdbc:h2:mem:boot-" + UUID.randomUUID())
                .run(context -> assertThat(
                                context.getBean(PessimisticLocks.class).dialect())
                        .isEqualTo(Dialect.H2));
    }

    @Test
    void aConfiguredDialectIsUsedWithoutBorrowingAConnection() {
        // (the default initialize-schema=embedded asks the database whether it is embedded)
        runner.withBean(DataSource.class, HoldfastAutoConfigurationTest::unreachable)
                .withPropertyValues("holdfast.dialect=postgresql", "holdfast.jdbc.initialize-schema=never")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(PessimisticLocks.class).dialect())
                            .isEqualTo(Dialect.POSTGRESQL);
                });
    }

    @Test
    void anUnknownDialectFailsTheStartClearly() {
        runner.withBean(DataSource.class, HoldfastAutoConfigurationTest::unreachable)
                .withPropertyValues("holdfast.dialect=oracle")
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .hasStackTraceContaining("holdfast.dialect")
                        .hasStackTraceContaining("oracle"));
    }

    @Test
    void backsOffWithoutADataSource() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(PessimisticLocks.class);
            assertThat(context).doesNotHaveBean(Dialect.class);
        });
    }

    @Test
    void canBeSwitchedOff() {
        runner.withBean(DataSource.class, HoldfastAutoConfigurationTest::unreachable)
                .withPropertyValues("holdfast.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(PessimisticLocks.class));
    }

    @Test
    void theApplicationsOwnBeansWin() {
        PessimisticLocks own = PessimisticLocks.of(Dialect.MARIADB);
        runner.withBean(DataSource.class, HoldfastAutoConfigurationTest::h2)
                .withBean(PessimisticLocks.class, () -> own)
                .run(context -> {
                    assertThat(context.getBean(PessimisticLocks.class)).isSameAs(own);
                    assertThat(context.getBean(Dialect.class)).isEqualTo(Dialect.H2);
                });
    }

    @Test
    void ideMetadataDescribesTheProperties() throws Exception {
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).isNotNull();
            String json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertThat(json)
                    .contains("\"holdfast.dialect\"")
                    .contains("\"holdfast.enabled\"")
                    .contains("detects it from the")
                    .contains("\"holdfast.pessimistic.name-blockers\"");
        }
    }
}
