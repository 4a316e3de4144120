package dev.holdfast.shop.actuate;

import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.pessimistic.offline.LockEndedException;
import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.shop.ShopApplication;
import dev.holdfast.spring.boot.OfflineLockLostException;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.StreamSupport;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The shop's {@code /actuator/holdfast} through HTTP, on H2 and on PostgreSQL: admins read it and
 * force-release through it (named as the operator), customers and anonymous callers are refused,
 * bad input gets a 4xx and changes nothing, and a row-lock wait shows with its blocker while it
 * waits. Each run is a shop of its own under a table prefix of its own, whose tables are dropped.
 */
class HoldfastEndpointHttpTest {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private final HttpClient http = HttpClient.newHttpClient();

    /** A shop on {@code db}; closing it drops its tables. */
    private static final class Shop implements AutoCloseable {
        final ConfigurableApplicationContext context;
        final String prefix;
        final String base;
        final JdbcTemplate jdbc;

        Shop(TestDatabase db) {
            prefix = "shop_a"
                    + Long.toString(RANDOM.nextLong() & Long.MAX_VALUE, 36).substring(0, 6) + "_";
            List<String> args = new ArrayList<>(List.of(
                    "--server.port=0",
                    "--shop.table-prefix=" + prefix,
                    "--spring.jpa.hibernate.ddl-auto=create-drop",
                    "--holdfast.offline.table=" + prefix + "locks",
                    "--holdfast.lease.table=" + prefix + "leases",
                    "--shop.job.schedule.enabled=false"));
            if (db.kind() == TestDatabase.Kind.H2) {
                args.add("--spring.datasource.url=jdbc:h2:mem:" + prefix + ";DB_CLOSE_DELAY=-1");
            } else {
                if (System.getenv("HOLDFAST_" + db.kind().name() + "_URL") != null) {
                    args.add("--spring.datasource.url=" + db.kind().url());
                    args.add("--spring.datasource.username=" + db.kind().user());
                    args.add("--spring.datasource.password=" + db.kind().password());
                }
                args.add("--spring.profiles.active=" + db.kind().id());
            }
            context = SpringApplication.run(ShopApplication.class, args.toArray(String[]::new));
            base = "http://127.0.0.1:"
                    + ((WebServerApplicationContext) context).getWebServer().getPort();
            jdbc = new JdbcTemplate(context.getBean(DataSource.class));
        }

        <T> T bean(Class<T> type) {
            return context.getBean(type);
        }

        /** Every lock and lease row, every column: what a refused call must leave as it was. */
        List<String> tables() {
            List<String> rows = new ArrayList<>();
            jdbc.query("SELECT * FROM " + prefix + "locks ORDER BY lock_type, resource_id", rs -> {
                rows.add(row(rs));
            });
            jdbc.query("SELECT * FROM " + prefix + "leases ORDER BY name", rs -> {
                rows.add(row(rs));
            });
            return rows;
        }

        private static String row(ResultSet rs) throws java.sql.SQLException {
            StringBuilder s = new StringBuilder();
            for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                s.append(rs.getString(i)).append('|');
            }
            return s.toString();
        }

        @Override
        public void close() {
            try {
                for (String table : List.of("locks", "leases_queue", "leases")) {
                    jdbc.execute("DROP TABLE IF EXISTS " + prefix + table);
                }
            } finally {
                context.close(); // create-drop: the shop's own tables go with it
            }
        }
    }

    private HttpResponse<String> send(Shop shop, String method, String path, String user) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(shop.base + path))
                .method(method, HttpRequest.BodyPublishers.noBody());
        if (user != null) {
            String password = user + "-pw";
            request.header(
                    "Authorization",
                    "Basic "
                            + Base64.getEncoder()
                                    .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8)));
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private JsonNode get(Shop shop, String path) throws Exception {
        HttpResponse<String> response = send(shop, "GET", path, "admin");
        assertThat(response.statusCode())
                .as("GET %s: %s", path, response.body())
                .isEqualTo(200);
        return JSON.readTree(response.body());
    }

    private static String q(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    @DatabaseTest(only = {TestDatabase.Kind.H2, TestDatabase.Kind.POSTGRESQL})
    void adminsReadAndForceReleaseOthersAreRefusedAndBadInputChangesNothing(TestDatabase db) throws Exception {
        try (Shop shop = new Shop(db)) {
            JdbcLockManager locks = shop.bean(JdbcLockManager.class);
            LeaseService leases = shop.bean(LeaseService.class);
            LockId held = locks.tryLock("purchase_order", "A/1 ü", "kim");
            Lease lease = leases.tryAcquire("nightly report", "server-7", Duration.ofMinutes(5))
                    .orElseThrow();

            // reads: admins only
            assertThat(send(shop, "GET", "/actuator/holdfast", null).statusCode())
                    .isEqualTo(401);
            assertThat(send(shop, "GET", "/actuator/holdfast", "alice").statusCode())
                    .isEqualTo(403);
            assertThat(send(shop, "GET", "/actuator/health", null).statusCode()).isEqualTo(200);
            JsonNode all = get(shop, "/actuator/holdfast");
            JsonNode lock = all.get("locks").get("items").get(0);
            assertThat(lock.get("type").asString()).isEqualTo("purchase_order");
            assertThat(lock.get("id").asString()).isEqualTo("A/1 ü");
            assertThat(lock.get("owner").asString()).isEqualTo("kim");
            assertThat(lock.has("lockId")).isFalse();
            assertThat(all.toString()).doesNotContain(held.getValue());
            JsonNode leaseItem = all.get("leases").get("items").get(0);
            assertThat(leaseItem.get("name").asString()).isEqualTo("nightly report");
            assertThat(leaseItem.get("holder").asString()).isEqualTo("server-7");
            assertThat(leaseItem.get("token").asLong()).isEqualTo(lease.token());
            assertThat(all.get("locks").get("limit").asInt()).isEqualTo(50);
            assertThat(all.get("locks").get("more").asBoolean()).isFalse();
            assertThat(all.get("leaseWaiters").get("items")).isEmpty();
            assertThat(all.get("rowLockWaits").get("error").isNull()).isTrue();
            assertThat(get(shop, "/actuator/holdfast/locks?owner=kim&limit=1").get("items"))
                    .hasSize(1);

            // bad input: 4xx, nothing changed
            List<String> before = shop.tables();
            assertThat(send(shop, "GET", "/actuator/holdfast/locks?limit=100000", "admin")
                            .statusCode())
                    .isEqualTo(400);
            assertThat(send(shop, "GET", "/actuator/holdfast/locks?after=%25", "admin")
                            .statusCode())
                    .isEqualTo(400);
            assertThat(send(shop, "GET", "/actuator/holdfast/nothing", "admin").statusCode())
                    .isEqualTo(404);
            String lockPath = "/actuator/holdfast/locks?type=purchase_order&id=" + q("A/1 ü");
            assertThat(send(shop, "DELETE", lockPath, null).statusCode()).isEqualTo(401);
            assertThat(send(shop, "DELETE", lockPath, "alice").statusCode()).isEqualTo(403);
            assertThat(send(shop, "DELETE", "/actuator/holdfast/locks?type=purchase_order&id=A-2", "admin")
                            .statusCode())
                    .isEqualTo(404);
            assertThat(send(shop, "DELETE", "/actuator/holdfast/locks?type=purchase_order", "admin")
                            .statusCode())
                    .isEqualTo(400);
            HttpResponse<String> noName = send(shop, "DELETE", "/actuator/holdfast/leases", "admin");
            assertThat(noName.statusCode()).isEqualTo(400);
            assertThat(noName.body()).contains("name is missing");
            assertThat(send(shop, "DELETE", "/actuator/holdfast/leases?name=other", "admin")
                            .statusCode())
                    .isEqualTo(404);
            assertThat(send(shop, "DELETE", "/actuator/holdfast/leases?name=" + q("nightly report"), "bob")
                            .statusCode())
                    .isEqualTo(403);
            assertThat(shop.tables()).isEqualTo(before);

            // force-release as admin: named as the operator
            HttpResponse<String> broken = send(shop, "DELETE", lockPath, "admin");
            assertThat(broken.statusCode()).as(broken.body()).isEqualTo(200);
            assertThat(JSON.readTree(broken.body()).get("by").asString()).isEqualTo("admin");
            assertThatThrownBy(() -> locks.checkLock(held, "purchase_order", "A/1 ü", "kim"))
                    .isInstanceOfSatisfying(
                            OfflineLockLostException.class,
                            e -> assertThat(e.getCause())
                                    .isInstanceOfSatisfying(
                                            LockEndedException.class,
                                            ended -> assertThat(ended.endedBy()).contains("admin")));
            assertThat(send(shop, "DELETE", lockPath, "admin").statusCode()).isEqualTo(404);
            HttpResponse<String> leaseBroken =
                    send(shop, "DELETE", "/actuator/holdfast/leases?name=" + q("nightly report"), "kim");
            assertThat(leaseBroken.statusCode()).as(leaseBroken.body()).isEqualTo(200);
            assertThat(leases.find("nightly report"))
                    .hasValueSatisfying(l -> assertThat(l.isReleased()).isTrue());
            assertThat(get(shop, "/actuator/holdfast").get("leases").get("items"))
                    .isEmpty();
        }
    }

    @DatabaseTest(only = {TestDatabase.Kind.H2, TestDatabase.Kind.POSTGRESQL})
    void aBlockedRowLockWaitIsListedWithItsBlocker(TestDatabase db) throws Exception {
        try (Shop shop = new Shop(db)) {
            String table = shop.prefix + "rows";
            shop.jdbc.execute("CREATE TABLE " + table + " (id BIGINT PRIMARY KEY, val VARCHAR(20))");
            shop.jdbc.update("INSERT INTO " + table + " VALUES (1, 'one')");
            DataSource pool = shop.bean(DataSource.class);
            CompletableFuture<Void> waiter = null;
            try (Connection holder = pool.getConnection();
                    Connection blocked = pool.getConnection()) {
                String holderId = sessionId(db, holder);
                String blockedId = sessionId(db, blocked);
                holder.setAutoCommit(false);
                try (Statement s = holder.createStatement()) {
                    s.executeQuery("SELECT val FROM " + table + " WHERE id = 1 FOR UPDATE")
                            .close();
                }
                if (db.kind() == TestDatabase.Kind.H2) {
                    try (Statement s = blocked.createStatement()) {
                        s.execute("SET LOCK_TIMEOUT 30000");
                    }
                }
                blocked.setAutoCommit(false);
                waiter = CompletableFuture.runAsync(() -> {
                    try (PreparedStatement ps =
                            blocked.prepareStatement("SELECT val FROM " + table + " WHERE id = ? FOR UPDATE")) {
                        ps.setLong(1, 1);
                        ps.executeQuery().close();
                    } catch (java.sql.SQLException e) {
                        throw new IllegalStateException(e);
                    }
                });
                JsonNode wait = await("the wait listed with its blocker")
                        .atMost(Duration.ofSeconds(20))
                        .pollInterval(Duration.ofMillis(100))
                        .until(
                                () -> StreamSupport.stream(
                                                get(shop, "/actuator/holdfast/row-lock-waits?limit=50")
                                                        .get("items")
                                                        .spliterator(),
                                                false)
                                        .filter(w -> w.get("session").asString().equals(blockedId))
                                        .findFirst()
                                        .orElse(null),
                                w -> w != null && !w.get("blockers").isEmpty());
                assertThat(wait.get("statement").asString()).containsIgnoringCase(table);
                assertThat(wait.get("blockers").get(0).get("session").asString())
                        .isEqualTo(holderId);
                assertThat(wait.get("blockers").get(0).get("blocks").asString()).isEqualTo(blockedId);
                assertThat(wait.get("blockersUnknownBecause").isNull()).isTrue();
                assertThat(send(shop, "GET", "/actuator/holdfast/row-lock-waits", "alice")
                                .statusCode())
                        .isEqualTo(403);
                System.out.printf("[%s] listed: %s%n", db.id(), wait);

                holder.rollback(); // the wait ends: the row is the waiter's
                waiter.get(20, java.util.concurrent.TimeUnit.SECONDS);
                blocked.rollback();
                holder.setAutoCommit(true);
                blocked.setAutoCommit(true);
                await("the wait gone")
                        .atMost(Duration.ofSeconds(20))
                        .pollInterval(Duration.ofMillis(100))
                        .until(() -> !get(shop, "/actuator/holdfast/row-lock-waits")
                                .toString()
                                .contains(table));
            } finally {
                if (waiter != null) {
                    waiter.cancel(true);
                }
                shop.jdbc.execute("DROP TABLE IF EXISTS " + table);
            }
        }
    }

    private static String sessionId(TestDatabase db, Connection c) throws java.sql.SQLException {
        String sql = switch (db.kind()) {
            case POSTGRESQL -> "SELECT pg_backend_pid()";
            case MARIADB -> "SELECT CONNECTION_ID()";
            case H2 -> "SELECT SESSION_ID()";
        };
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
