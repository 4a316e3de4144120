package dev.holdfast.shop.order;

import dev.holdfast.shop.ShopApplication;
import dev.holdfast.shop.schema.ShopTableNames;
import dev.holdfast.testing.TestDatabase;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

import java.security.SecureRandom;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * The shop running on one database of the test matrix, under a table prefix of its own
 * ({@code shop_t<random>_}), with {@code create-drop}: its tables go when the JVM ends. One per database
 * per JVM, because a Spring context takes seconds to start.
 */
final class ShopOnDatabase {

    private static final Map<TestDatabase.Kind, ShopOnDatabase> RUNNING = new EnumMap<>(TestDatabase.Kind.class);
    private static final AtomicInteger ORDERS = new AtomicInteger();
    private static final SecureRandom RANDOM = new SecureRandom();

    final ConfigurableApplicationContext context;
    final OrderService service;
    final JdbcTemplate jdbc;
    final String table;

    private ShopOnDatabase(TestDatabase.Kind kind) {
        String prefix =
                "shop_t" + Long.toString(RANDOM.nextLong() & Long.MAX_VALUE, 36).substring(0, 6) + "_";
        List<String> args = new ArrayList<>(List.of(
                "--server.port=0",
                "--spring.datasource.hikari.maximum-pool-size=12",
                "--spring.jpa.hibernate.ddl-auto=create-drop",
                "--shop.table-prefix=" + prefix,
                "--holdfast.offline.table=" + prefix + "locks",
                "--holdfast.lease.table=" + prefix + "leases",
                // the nightly job's schedule would run beside the tests; they never need it
                "--shop.job.schedule.enabled=false"));
        if (kind == TestDatabase.Kind.H2 || System.getenv("HOLDFAST_" + kind.name() + "_URL") != null) {
            args.add("--spring.datasource.url=" + kind.url());
            args.add("--spring.datasource.username=" + kind.user());
            args.add("--spring.datasource.password=" + kind.password());
        }
        if (kind != TestDatabase.Kind.H2) {
            // The shop's own profile (application-postgresql/-mariadb.properties) is what reaches the server.
            args.add("--spring.profiles.active=" + kind.id());
        }
        context = SpringApplication.run(ShopApplication.class, args.toArray(String[]::new));
        service = context.getBean(OrderService.class);
        DataSource dataSource = context.getBean(DataSource.class);
        jdbc = new JdbcTemplate(dataSource);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                jdbc.execute("DROP TABLE IF EXISTS " + prefix + "locks"); // created by holdfast.schema.install
                jdbc.execute("DROP TABLE IF EXISTS " + prefix + "leases");
                jdbc.execute("DROP TABLE IF EXISTS " + prefix + "leases_queue");
            } finally {
                context.close();
            }
        }));
        table = context.getBean(ShopTableNames.class).orders();
    }

    static synchronized ShopOnDatabase on(TestDatabase db) {
        return RUNNING.computeIfAbsent(db.kind(), ShopOnDatabase::new);
    }

    DataSource dataSource() {
        return context.getBean(DataSource.class);
    }

    /** Connections borrowed from the shop's pool right now; 0 between operations, or one leaked. */
    int activeConnections() {
        return context.getBean(com.zaxxer.hikari.HikariDataSource.class)
                .getHikariPoolMXBean()
                .getActiveConnections();
    }

    String newOrder(String orderer) {
        String number = "D" + ORDERS.incrementAndGet() + "-"
                + Long.toString(RANDOM.nextLong() & Long.MAX_VALUE, 36).substring(0, 5);
        context.getBean(OrderRepository.class)
                .save(new Order(
                        number,
                        orderer,
                        List.of(new OrderLine("Kettle", 3_900, 1)),
                        new ShippingInfo(
                                new Receiver("Receiver", "+1 555 0100"), new Address("12345", "1 Original Road", null)),
                        OrderState.PREPARING,
                        Instant.now()));
        return number;
    }

    long version(String orderNumber) {
        return jdbc.queryForObject("SELECT version FROM " + table + " WHERE order_number = ?", Long.class, orderNumber);
    }

    String address1(String orderNumber) {
        return jdbc.queryForObject(
                "SELECT address1 FROM " + table + " WHERE order_number = ?", String.class, orderNumber);
    }

    String state(String orderNumber) {
        return jdbc.queryForObject("SELECT state FROM " + table + " WHERE order_number = ?", String.class, orderNumber);
    }
}
