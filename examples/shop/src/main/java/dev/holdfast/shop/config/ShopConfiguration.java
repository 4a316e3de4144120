package dev.holdfast.shop.config;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.time.Clock;

@Configuration(proxyBeanMethods = false)
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
