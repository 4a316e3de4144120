package dev.holdfast.shop.config;

import dev.holdfast.shop.schema.ShopTableNames;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;

import java.time.Clock;

/** Scheduling is on for the leased "nightly" job (scenario 5). */
@Configuration(proxyBeanMethods = false)
@EnableScheduling
class ShopConfiguration {

    @Bean
    ShopTableNames shopTableNames(@Value("${shop.table-prefix:shop_}") String prefix) {
        return new ShopTableNames(prefix);
    }

    @Bean
    Clock clock() {
        return Clock.systemUTC();
    }
}
