package dev.holdfast.spring.boot.actuate;

import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.Principal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The endpoint's force-releases in a Boot web application without Spring Security, over HTTP: off
 * unless the application turns them on, and even then refused to an anonymous caller; a caller the
 * container signed in breaks the lease and is recorded as who did.
 */
class HoldfastEndpointAccessTest {

    private static final String OPERATOR_HEADER = "X-Test-Operator";
    private final HttpClient http = HttpClient.newHttpClient();

    /** A plain Boot web application: Actuator, Holdfast, the test's pool, no Spring Security. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {}

    /**
     * What container authentication does, without Spring Security: a request carrying
     * {@value #OPERATOR_HEADER} has that user as its principal.
     */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class AppWithContainerLogin {
        @Bean
        Filter containerLogin() {
            return (request, response, chain) -> {
                String user = ((HttpServletRequest) request).getHeader(OPERATOR_HEADER);
                if (user == null) {
                    chain.doFilter(request, response);
                    return;
                }
                Principal principal = () -> user;
                chain.doFilter(
                        new HttpServletRequestWrapper((HttpServletRequest) request) {
                            @Override
                            public Principal getUserPrincipal() {
                                return principal;
                            }
                        },
                        response);
            };
        }
    }

    private record Running(ConfigurableApplicationContext context, String base, String leasesTable)
            implements AutoCloseable {
        LeaseService leases() {
            return context.getBean(LeaseService.class);
        }

        @Override
        public void close() {
            context.close();
        }
    }

    private static Running start(TestDatabase db, Class<?> app, String... properties) {
        String leasesTable = db.newTableName("hf_acc_leases");
        db.dropAfterTest(leasesTable + "_queue");
        List<String> args = new ArrayList<>(List.of(
                "--server.port=0",
                "--management.endpoints.web.exposure.include=holdfast",
                "--holdfast.jdbc.initialize-schema=always",
                "--holdfast.lease.table=" + leasesTable,
                "--holdfast.offline.table=" + db.newTableName("hf_acc_locks"),
                "--spring.flyway.enabled=false",
                "--spring.liquibase.enabled=false"));
        for (String p : properties) {
            args.add("--" + p);
        }
        SpringApplication application = new SpringApplication(app);
        DataSource pool = new DelegatingDataSource(db.dataSource()); // the test's shared pool stays open
        application.addInitializers(c -> c.getBeanFactory().registerSingleton("dataSource", pool));
        ConfigurableApplicationContext context = application.run(args.toArray(String[]::new));
        int port = ((WebServerApplicationContext) context).getWebServer().getPort();
        return new Running(context, "http://127.0.0.1:" + port, leasesTable);
    }

    private HttpResponse<String> delete(Running app, String path, String operator) throws Exception {
        HttpRequest.Builder request =
                HttpRequest.newBuilder(URI.create(app.base() + path)).DELETE();
        if (operator != null) {
            request.header(OPERATOR_HEADER, operator);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static void assertStillHeld(LeaseService leases, Lease lease) {
        assertThat(leases.find(lease.name())).hasValueSatisfying(now -> {
            assertThat(now.isReleased()).isFalse();
            assertThat(now.token()).isEqualTo(lease.token());
            assertThat(now.owner()).isEqualTo(lease.owner());
        });
    }

    @DatabaseTest
    void byDefaultAnAnonymousDeleteIsRefusedAndTheLeaseStaysHeld(TestDatabase db) throws Exception {
        try (Running app = start(db, App.class)) {
            Lease lease = app.leases()
                    .tryAcquire("nightly-report", "server-7", Duration.ofMinutes(5))
                    .orElseThrow();

            HttpResponse<String> refused = delete(app, "/actuator/holdfast/leases?name=nightly-report", null);

            assertThat(refused.statusCode()).as(refused.body()).isEqualTo(405);
            assertStillHeld(app.leases(), lease);
        }
    }

    @DatabaseTest
    void withWritesOnAnAnonymousDeleteIsStillRefusedAndTheLeaseStaysHeld(TestDatabase db) throws Exception {
        try (Running app = start(db, AppWithContainerLogin.class, "management.endpoint.holdfast.access=unrestricted")) {
            Lease lease = app.leases()
                    .tryAcquire("nightly-report", "server-7", Duration.ofMinutes(5))
                    .orElseThrow();

            HttpResponse<String> refused = delete(app, "/actuator/holdfast/leases?name=nightly-report", null);

            assertThat(refused.statusCode()).as(refused.body()).isEqualTo(403);
            assertThat(refused.body()).contains("authenticated principal");
            assertStillHeld(app.leases(), lease);
        }
    }

    @DatabaseTest
    void withWritesOnASignedInOperatorBreaksTheLeaseAndIsRecorded(TestDatabase db) throws Exception {
        try (Running app = start(db, AppWithContainerLogin.class, "management.endpoint.holdfast.access=unrestricted")) {
            assertThat(app.leases().tryAcquire("nightly-report", "server-7", Duration.ofMinutes(5)))
                    .isPresent();

            HttpResponse<String> broken = delete(app, "/actuator/holdfast/leases?name=nightly-report", "ops-kim");

            assertThat(broken.statusCode()).as(broken.body()).isEqualTo(200);
            assertThat(broken.body()).contains("\"by\":\"ops-kim\"");
            assertThat(app.leases().find("nightly-report"))
                    .hasValueSatisfying(l -> assertThat(l.isReleased()).isTrue());
            assertThat(new JdbcTemplate(db.dataSource())
                            .queryForObject(
                                    "SELECT broken_by FROM " + app.leasesTable() + " WHERE name = 'nightly-report'",
                                    String.class))
                    .isEqualTo("ops-kim");
        }
    }
}
