package dev.holdfast.shop;

import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import static org.assertj.core.api.Assertions.assertThat;

class ShopApplicationTest {

    @Test
    void startsOnH2AndServesTheHomePage() throws Exception {
        try (ConfigurableApplicationContext context = SpringApplication.run(ShopApplication.class, "--server.port=0")) {
            int port = ((WebServerApplicationContext) context).getWebServer().getPort();
            HttpResponse<String> response = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.body()).contains("Holdfast shop").contains("<strong>h2</strong>");
            // by default the nightly report runs on its schedule (tests switch it off: shop.job.schedule.enabled)
            assertThat(
                            context
                                    .getBeansOfType(org.springframework.scheduling.config.ScheduledTaskHolder.class)
                                    .values()
                                    .stream()
                                    .mapToInt(h -> h.getScheduledTasks().size())
                                    .sum())
                    .isPositive();
        }
    }
}
