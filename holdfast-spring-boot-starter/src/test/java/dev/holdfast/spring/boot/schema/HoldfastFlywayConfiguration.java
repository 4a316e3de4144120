package dev.holdfast.spring.boot.schema;

import dev.holdfast.jdbc.dialect.Dialect;
import org.flywaydb.core.Flyway;
import org.springframework.boot.flyway.autoconfigure.FlywayMigrationStrategy;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.util.Map;
import javax.sql.DataSource;

/** The Flyway recipes of docs/schema.md, word for word: Holdfast's scripts in a history table of their own. */
@Configuration(proxyBeanMethods = false)
class HoldfastFlywayConfiguration {

    // tag::flyway-strategy[]
    @Bean
    FlywayMigrationStrategy applicationThenHoldfast(DataSource dataSource) {
        return application -> {
            application.migrate();          // your migrations, in flyway_schema_history
            migrateHoldfast(dataSource);    // Holdfast's, in flyway_holdfast_history
        };
    }
    // end::flyway-strategy[]

    // tag::flyway-java[]
    static void migrateHoldfast(DataSource dataSource) {
        Flyway.configure()
                .dataSource(dataSource)
                .locations("classpath:dev/holdfast/schema/" + Dialect.detect(dataSource).id())
                .table("flyway_holdfast_history")     // Holdfast's versions, apart from yours
                .placeholders(Map.of("holdfast_locks_table", "holdfast_locks",
                        "holdfast_leases_table", "holdfast_leases"))
                .baselineOnMigrate(true)              // also into a schema that has tables already,
                .baselineVersion("0")                 // from Holdfast's first version on
                .load()
                .migrate();
    }
    // end::flyway-java[]
}
