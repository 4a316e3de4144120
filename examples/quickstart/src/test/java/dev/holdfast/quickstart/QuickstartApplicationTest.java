package dev.holdfast.quickstart;

import dev.holdfast.lease.LeaseService;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's quick start as a user runs it, on H2 (its properties as written) and on PostgreSQL: it
 * takes a lease, lists it at {@code /actuator/holdfast}, refuses an anonymous force-release, counts the
 * acquisition in {@code /actuator/metrics} and reports {@code holdfast} in its health.
 */
class QuickstartApplicationTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> send(String base, String method, String path) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create(base + path))
                        .method(method, HttpRequest.BodyPublishers.noBody())
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private JsonNode json(String base, String path) throws Exception {
        HttpResponse<String> response = send(base, "GET", path);
        assertThat(response.statusCode())
                .as("GET %s: %s", path, response.body())
                .isEqualTo(200);
        return JSON.readTree(response.body());
    }

    @DatabaseTest(only = {TestDatabase.Kind.H2, TestDatabase.Kind.POSTGRESQL})
    void takesALeaseListsItRefusesAnAnonymousWriteCountsItAndReportsHealth(TestDatabase db) throws Exception {
        String leases = db.newTableName("qs_leases");
        db.dropAfterTest(leases + "_queue");
        db.dropAfterTest(leases + "_timelines");
        List<String> args = new ArrayList<>(List.of(
                "--server.port=0",
                "--holdfast.lease.table=" + leases,
                "--holdfast.offline.table=" + db.newTableName("qs_locks")));
        if (db.kind() == TestDatabase.Kind.POSTGRESQL) {
            args.addAll(List.of(
                    "--spring.datasource.url=" + db.kind().url(),
                    "--spring.datasource.username=" + db.kind().user(),
                    "--spring.datasource.password=" + db.kind().password()));
        }
        try (ConfigurableApplicationContext context =
                SpringApplication.run(QuickstartApplication.class, args.toArray(String[]::new))) {
            String base = "http://127.0.0.1:"
                    + ((WebServerApplicationContext) context).getWebServer().getPort();

            HttpResponse<String> started = send(base, "POST", "/report");
            assertThat(started.statusCode()).isEqualTo(200);
            assertThat(started.body()).startsWith("report started under lease token ");
            assertThat(send(base, "POST", "/report").body()).isEqualTo("another server runs the report");

            JsonNode listed = json(base, "/actuator/holdfast/leases");
            assertThat(listed.get("items").get(0).get("name").asString()).isEqualTo("nightly-report");

            HttpResponse<String> anonymous = send(base, "DELETE", "/actuator/holdfast/leases?name=nightly-report");
            assertThat(anonymous.statusCode()).as(anonymous.body()).isEqualTo(405);
            assertThat(context.getBean(LeaseService.class).find("nightly-report"))
                    .hasValueSatisfying(lease -> assertThat(lease.isReleased()).isFalse());

            JsonNode acquisitions = json(base, "/actuator/metrics/holdfast.lease.acquisitions");
            assertThat(acquisitions.get("measurements").get(0).get("value").asDouble())
                    .isEqualTo(1.0);

            JsonNode health = json(base, "/actuator/health");
            assertThat(health.get("status").asString()).isEqualTo("UP");
            assertThat(health.get("components").get("holdfast").get("status").asString())
                    .isEqualTo("UP");
            assertThat(health.get("components")
                            .get("holdfast")
                            .get("details")
                            .get("schema")
                            .asString())
                    .isEqualTo("present and current");
        }
    }
}
