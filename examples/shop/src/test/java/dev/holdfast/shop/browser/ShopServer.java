package dev.holdfast.shop.browser;

import dev.holdfast.shop.ShopApplication;
import dev.holdfast.shop.order.Address;
import dev.holdfast.shop.order.Order;
import dev.holdfast.shop.order.OrderLine;
import dev.holdfast.shop.order.OrderRepository;
import dev.holdfast.shop.order.OrderState;
import dev.holdfast.shop.order.Receiver;
import dev.holdfast.shop.order.ShippingInfo;
import dev.holdfast.shop.schema.ShopTableNames;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

import static org.awaitility.Awaitility.await;

/**
 * One shop for all browser tests of this JVM, on a random port, on its own in-memory H2 database, or
 * on PostgreSQL when the system property {@code shop.browser.database} is {@code postgresql} (the
 * build's second browser run): then under a table prefix of its own, whose tables are dropped when
 * the JVM ends. With {@code CI=true} an unreachable PostgreSQL fails the run; otherwise its browser
 * tests are skipped. Tests read the order table with plain SQL, not through the shop's JPA code, so
 * what they check is what the database holds.
 */
final class ShopServer {

    static final java.time.Duration EDIT_LOCK_EXPIRY = java.time.Duration.ofSeconds(4);
    static final java.time.Duration HEARTBEAT = java.time.Duration.ofSeconds(1);

    private static ShopServer instance;
    private static final AtomicInteger ORDERS = new AtomicInteger();

    private final ConfigurableApplicationContext context;
    private final String baseUrl;
    private final JdbcTemplate jdbc;
    private final String table;

    /** The database of this JVM's browser tests: {@code h2} or {@code postgresql}. */
    static final String DATABASE = System.getProperty("shop.browser.database", "h2");

    static boolean onPostgreSql() {
        return "postgresql".equals(DATABASE);
    }

    private ShopServer(String... extraArgs) {
        this(
                onPostgreSql()
                        ? "b" + UUID.randomUUID().toString().replace("-", "").substring(0, 10) + "_"
                        : null,
                true,
                extraArgs);
    }

    /**
     * @param prefix     the PostgreSQL table prefix (null on H2)
     * @param ownsTables whether this shop drops the prefix's tables when the JVM ends
     */
    private ShopServer(String prefix, boolean ownsTables, String... extraArgs) {
        List<String> args = new java.util.ArrayList<>(List.of(
                "--server.port=0",
                // Edit locks live EDIT_LOCK_EXPIRY unless the page's heartbeat extends them, so that the
                // offline lock tests see expiry and extension within seconds.
                "--holdfast.offline.default-expiry=" + EDIT_LOCK_EXPIRY.toMillis() + "ms",
                "--holdfast.web.heartbeat-interval=" + HEARTBEAT.toMillis() + "ms",
                // Tests start the nightly job themselves ("Run now"); its schedule would race them.
                "--shop.job.schedule.enabled=false"));
        if (prefix == null) {
            args.add("--spring.datasource.url=jdbc:h2:mem:browser-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        } else {
            requirePostgreSql();
            args.addAll(List.of(
                    "--spring.profiles.active=postgresql",
                    "--spring.datasource.url=" + POSTGRESQL_URL,
                    "--shop.table-prefix=" + prefix,
                    "--holdfast.offline.table=" + prefix + "locks",
                    "--holdfast.lease.table=" + prefix + "leases"));
        }
        args.addAll(java.util.Arrays.asList(extraArgs));
        context = SpringApplication.run(ShopApplication.class, args.toArray(String[]::new));
        baseUrl = "http://127.0.0.1:"
                + ((WebServerApplicationContext) context).getWebServer().getPort();
        jdbc = new JdbcTemplate(context.getBean(DataSource.class));
        table = context.getBean(ShopTableNames.class).orders();
        this.prefix = prefix;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            context.close();
            if (prefix != null && ownsTables) {
                dropTables(prefix);
            }
        }));
    }

    private static final String POSTGRESQL_URL =
            System.getenv().getOrDefault("HOLDFAST_POSTGRESQL_URL", "jdbc:postgresql://127.0.0.1:5432/test");

    private final String prefix;

    /** With CI=true an unreachable PostgreSQL fails the test; otherwise the test is skipped, loudly. */
    private static void requirePostgreSql() {
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(POSTGRESQL_URL, "postgres", "")) {
            c.isValid(5);
        } catch (java.sql.SQLException e) {
            String message =
                    "PostgreSQL at " + POSTGRESQL_URL + " is unreachable for the browser tests: " + e.getMessage();
            if ("true".equals(System.getenv("CI"))) {
                throw new IllegalStateException(message + " (CI=true: failing, not skipping)", e);
            }
            System.err.println("WARNING: " + message + "; skipping them");
            org.junit.jupiter.api.Assumptions.abort(message);
        }
    }

    /** Drops every table under the prefix (the shop's, Holdfast's locks, leases and lease queue). */
    private static void dropTables(String prefix) {
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(POSTGRESQL_URL, "postgres", "");
                java.sql.PreparedStatement tables = c.prepareStatement(
                        "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE ?")) {
            tables.setString(1, prefix + "%");
            List<String> names = new java.util.ArrayList<>();
            try (java.sql.ResultSet rs = tables.executeQuery()) {
                while (rs.next()) {
                    names.add(rs.getString(1));
                }
            }
            try (java.sql.Statement drop = c.createStatement()) {
                for (String name : names) {
                    drop.execute("DROP TABLE IF EXISTS \"" + name + "\" CASCADE");
                }
            }
        } catch (java.sql.SQLException e) {
            System.err.println("could not drop the browser tests' tables under " + prefix + ": " + e.getMessage());
        }
    }

    /**
     * A second shop instance on the same database and tables as this one (PostgreSQL only), as a
     * second server of one deployment; the caller closes it, this shop drops the tables.
     */
    ShopServer sibling(String... extraArgs) {
        if (prefix == null) {
            throw new IllegalStateException("two instances share a database on PostgreSQL only");
        }
        return new ShopServer(prefix, false, extraArgs);
    }

    /**
     * A shop of its own (own port, own in-memory database) with extra properties, for tests that need
     * another configuration; the caller closes it.
     */
    static ShopServer separate(String... extraArgs) {
        return new ShopServer(extraArgs);
    }

    void close() {
        context.close();
    }

    <T> T bean(Class<T> type) {
        return context.getBean(type);
    }

    static synchronized ShopServer get() {
        if (instance == null) {
            instance = new ShopServer();
        }
        return instance;
    }

    String url(String path) {
        return baseUrl + path;
    }

    DataSource dataSource() {
        return context.getBean(DataSource.class);
    }

    String ordersTable() {
        return table;
    }

    /** A fresh order being prepared, so tests never share state. */
    String newOrder(String orderer) {
        String number = "T" + ORDERS.incrementAndGet() + "-"
                + UUID.randomUUID().toString().substring(0, 6).toUpperCase();
        ShippingInfo shipping = new ShippingInfo(
                new Receiver("Test Receiver", "+1 555 0100"), new Address("12345", "1 Original Road", null));
        context.getBean(OrderRepository.class)
                .save(new Order(
                        number,
                        orderer,
                        List.of(new OrderLine("Test kettle", 3_900, 1)),
                        shipping,
                        OrderState.PREPARING,
                        Instant.now()));
        return number;
    }

    /** The order's row as the database holds it. */
    OrderRow row(String orderNumber) {
        return jdbc.queryForObject(
                "SELECT state, address1, zip_code, receiver_name, version, modified_by FROM " + table
                        + " WHERE order_number = ?",
                (rs, i) -> new OrderRow(
                        rs.getString(1),
                        rs.getString(2),
                        rs.getString(3),
                        rs.getString(4),
                        rs.getLong(5),
                        rs.getString(6)),
                orderNumber);
    }

    record OrderRow(
            String state, String address1, String zipCode, String receiverName, long version, String modifiedBy) {}

    /** Who holds the live edit lock of an order, by database time (null: nobody). */
    String editLockOwner(String orderNumber) {
        return context.getBean(dev.holdfast.pessimistic.offline.JdbcLockManager.class)
                .holder("purchase_order", orderNumber)
                .map(dev.holdfast.pessimistic.offline.HeldLock::owner)
                .orElse(null);
    }

    /** Invoices of an order, as the database holds them: "bill_to @ order_version by issued_by" each. */
    List<String> invoices(String orderNumber) {
        return jdbc.queryForList(
                "SELECT receiver_name || ', ' || address1 || ' (' || zip_code || ') @ ' || order_version || ' by ' || issued_by FROM "
                        + context.getBean(ShopTableNames.class).prefix() + "invoice WHERE order_number = ? ORDER BY id",
                String.class,
                orderNumber);
    }

    /** The shop's lease service (the same table the admin page lists). */
    dev.holdfast.lease.LeaseService leases() {
        return context.getBean(dev.holdfast.lease.LeaseService.class);
    }

    /** Waits until the lease {@code name} is live in the shop's table (a run took it); returns it. */
    dev.holdfast.lease.Lease awaitLiveLease(String name) {
        return await("a run took the lease '" + name + "'")
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(20))
                .until(
                        () -> leases().list().stream()
                                .filter(l -> l.name().equals(name))
                                .findFirst()
                                .orElse(null),
                        Objects::nonNull);
    }

    /** Every task the shop has scheduled (the tests want none: they start runs themselves). */
    java.util.Set<org.springframework.scheduling.config.ScheduledTask> scheduledTasks() {
        return context.getBeansOfType(org.springframework.scheduling.config.ScheduledTaskHolder.class).values().stream()
                .flatMap(h -> h.getScheduledTasks().stream())
                .collect(java.util.stream.Collectors.toSet());
    }

    /** The fencing token stored with the nightly report's result (null: never written). */
    Long jobResultToken() {
        List<Long> tokens = jdbc.queryForList(
                "SELECT fence_token FROM "
                        + context.getBean(ShopTableNames.class).prefix() + "job_result WHERE job = ?",
                Long.class,
                dev.holdfast.shop.job.NightlyReportJob.JOB);
        return tokens.isEmpty() ? null : tokens.get(0);
    }

    /** The order's receiver phone and line quantities, as the database holds them. */
    String phoneAndQuantities(String orderNumber) {
        String phone = jdbc.queryForObject(
                "SELECT receiver_phone FROM " + table + " WHERE order_number = ?", String.class, orderNumber);
        String lineTable = table.substring(0, table.length() - "purchase_order".length()) + "order_line";
        List<Integer> quantities = jdbc.queryForList(
                "SELECT quantity FROM " + lineTable + " WHERE order_number = ? ORDER BY line_no",
                Integer.class,
                orderNumber);
        return phone + " " + quantities;
    }
}
