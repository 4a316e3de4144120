package dev.holdfast.spring.boot.actuate;

import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.lease.LeaseView;
import dev.holdfast.pessimistic.RowLockWaits;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.pessimistic.offline.LockEndedException;
import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.spring.boot.HoldfastAutoConfiguration;
import dev.holdfast.spring.boot.actuate.HoldfastEndpoint.LeaseItem;
import dev.holdfast.spring.boot.actuate.HoldfastEndpoint.LockItem;
import dev.holdfast.spring.boot.actuate.HoldfastEndpoint.Overview;
import dev.holdfast.spring.boot.actuate.HoldfastEndpoint.Page;
import dev.holdfast.spring.boot.actuate.HoldfastEndpoint.Refusal;
import dev.holdfast.spring.boot.actuate.HoldfastEndpoint.Released;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;

import java.security.Principal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The endpoint's auto-configuration (only with Actuator, only where exposed) and its answers on H2:
 * pages within their limit, 400 for bad input, 404 for what is not there, and nothing changed by a
 * refused force-release. Through HTTP and on PostgreSQL in the shop ({@code HoldfastEndpointHttpTest}).
 */
class HoldfastEndpointTest {

    private static DataSource h2() {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:endpoint-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        return ds;
    }

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    HoldfastAutoConfiguration.class,
                    EndpointAutoConfiguration.class,
                    HoldfastEndpointAutoConfiguration.class))
            .withBean(DataSource.class, HoldfastEndpointTest::h2)
            .withPropertyValues("holdfast.jdbc.initialize-schema=always");

    @Test
    void theEndpointIsThereOnlyWhenExposed() {
        runner.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(HoldfastEndpoint.class));
        runner.withPropertyValues("management.endpoints.web.exposure.include=holdfast")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(HoldfastEndpoint.class));
        runner.withPropertyValues(
                        "management.endpoints.web.exposure.include=*", "management.endpoint.holdfast.access=NONE")
                .run(context -> assertThat(context).doesNotHaveBean(HoldfastEndpoint.class));
        runner.withPropertyValues("management.endpoints.web.exposure.include=holdfast", "holdfast.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(HoldfastEndpoint.class));
    }

    @Test
    void withoutActuatorThereIsNoEndpointAndTheRestWorks() {
        runner.withClassLoader(new FilteredClassLoader(Endpoint.class))
                .withPropertyValues("management.endpoints.web.exposure.include=holdfast")
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .doesNotHaveBean(HoldfastEndpoint.class)
                        .hasSingleBean(JdbcLockManager.class));
    }

    @Test
    void theEndpointShowsTheApplicationsLocksAndLeases() {
        runner.withPropertyValues("management.endpoints.web.exposure.include=holdfast")
                .run(context -> {
                    context.getBean(JdbcLockManager.class).tryLock("order", "A-1", "kim");
                    Lease lease = context.getBean(LeaseService.class)
                            .tryAcquire("report", "server-7", Duration.ofMinutes(1))
                            .orElseThrow();
                    Overview all = (Overview) context.getBean(HoldfastEndpoint.class)
                            .overview(null)
                            .getBody();
                    assertThat(all.locks().items())
                            .containsExactly(new LockItem(
                                    "order",
                                    "A-1",
                                    "kim",
                                    all.locks().items().get(0).acquiredAt(),
                                    all.locks().items().get(0).expiresAt()));
                    assertThat(all.leases().items())
                            .containsExactly(new LeaseItem(
                                    "report", "server-7", lease.token(), lease.acquiredAt(), lease.expiresAt()));
                    assertThat(all.leaseWaiters().items()).isEmpty();
                    assertThat(all.rowLockWaits().items()).isEmpty();
                    assertThat(all.rowLockWaits().error()).isNull();
                });
    }

    // ------------------------------------------------------------------ the endpoint on its own

    private DataSource ds;
    private JdbcLockManager locks;
    private LeaseService leases;
    private HoldfastEndpoint endpoint;
    private JdbcTemplate jdbc;

    @BeforeEach
    void setUp() {
        ds = h2();
        SchemaInstaller schema = new SchemaInstaller(ds);
        schema.installClock();
        schema.install(HoldfastTable.OFFLINE_LOCKS);
        schema.install(HoldfastTable.LEASES);
        locks = JdbcLockManager.builder(ds).ownerBinding(true).build();
        leases = LeaseService.builder(ds).build();
        endpoint = new HoldfastEndpoint(locks, leases, LeaseView.of(ds, leases), RowLockWaits.of(Dialect.H2, ds));
        jdbc = new JdbcTemplate(ds);
    }

    @AfterEach
    void tearDown() {
        leases.close();
    }

    private static SecurityContext as(String name) {
        Principal principal = () -> name;
        return new SecurityContext() {
            @Override
            public Principal getPrincipal() {
                return principal;
            }

            @Override
            public boolean isUserInRole(String role) {
                return false;
            }
        };
    }

    /** Every lock and lease row, every column: what a refused call must leave as it was. */
    private List<String> tables() {
        List<String> rows = new ArrayList<>(jdbc.queryForList(
                "SELECT CONCAT_WS('|', lock_type, resource_id, lock_id,"
                        + " lock_owner, acquired_at, expires_at, ended_by) FROM holdfast_locks ORDER BY 1",
                String.class));
        rows.addAll(jdbc.queryForList(
                "SELECT CONCAT_WS('|', name, owner, token, acquired_at, expires_at, broken_by)"
                        + " FROM holdfast_leases ORDER BY 1",
                String.class));
        return rows;
    }

    @SuppressWarnings("unchecked")
    private static <T> Page<T> page(WebEndpointResponse<Object> response) {
        assertThat(response.getStatus()).as("status of %s", response.getBody()).isEqualTo(200);
        return (Page<T>) response.getBody();
    }

    private static void assertRefused(WebEndpointResponse<Object> response, int status, String error) {
        assertThat(response.getStatus()).isEqualTo(status);
        assertThat(((Refusal) response.getBody()).error()).contains(error);
    }

    @Test
    void pagesHoldTheirLimitAndTheCursorWalksThemAll() {
        for (int i = 0; i < 120; i++) {
            locks.tryLock("order", String.format("A-%03d", i), "kim");
        }
        Page<LockItem> first = page(endpoint.section("locks", null, null, null, null, null));
        assertThat(first.items()).hasSize(HoldfastEndpoint.DEFAULT_LIMIT);
        assertThat(first.more()).isTrue();
        List<String> ids = new ArrayList<>();
        first.items().forEach(l -> ids.add(l.id()));
        String next = first.next();
        while (next != null) {
            Page<LockItem> p = page(endpoint.section("locks", 30, next, null, null, null));
            assertThat(p.items()).hasSizeLessThanOrEqualTo(30);
            p.items().forEach(l -> ids.add(l.id()));
            next = p.next();
            assertThat(p.more()).isEqualTo(next != null);
        }
        assertThat(ids).hasSize(120).isSorted().doesNotHaveDuplicates();
        assertThat(page(endpoint.section("locks", 5, null, "order", "kim", null))
                        .items())
                .hasSize(5);
        assertThat(page(endpoint.section("locks", 5, null, "invoice", null, null))
                        .items())
                .isEmpty();

        Overview all = (Overview) endpoint.overview(10).getBody();
        assertThat(all.locks().items()).hasSize(10);
        assertThat(all.locks().more()).isTrue();

        assertRefused(endpoint.section("locks", HoldfastEndpoint.MAX_LIMIT + 1, null, null, null, null), 400, "limit");
        assertRefused(endpoint.section("locks", 0, null, null, null, null), 400, "limit");
        assertRefused(endpoint.overview(-1), 400, "limit");
        assertRefused(
                endpoint.section("row-lock-waits", HoldfastEndpoint.MAX_ROW_LOCK_WAITS + 1, null, null, null, null),
                400,
                "limit");
    }

    @Test
    void leasesAndWaitersPageByName() {
        for (String name : List.of("c", "a", "b")) {
            assertThat(leases.tryAcquire(name, "server-7", Duration.ofMinutes(1)))
                    .isPresent();
        }
        Page<LeaseItem> first = page(endpoint.section("leases", 2, null, null, null, null));
        assertThat(first.items()).extracting(LeaseItem::name).containsExactly("a", "b");
        Page<LeaseItem> second = page(endpoint.section("leases", 2, first.next(), null, null, null));
        assertThat(second.items()).extracting(LeaseItem::name).containsExactly("c");
        assertThat(second.more()).isFalse();
        assertThat(second.next()).isNull();
        assertThat(page(endpoint.section("lease-waiters", null, null, null, null, "a"))
                        .items())
                .isEmpty();
    }

    @Test
    void badInputIsRefusedWithA4xx() {
        assertRefused(endpoint.section("nothing", null, null, null, null, null), 404, "no section nothing");
        assertRefused(endpoint.section("locks", null, "%%%", null, null, null), 400, "cursor");
        assertRefused(endpoint.section("locks", null, "YWJj", null, null, null), 400, "cursor"); // "abc": no type/id
        assertRefused(endpoint.section("lease-waiters", null, "YWJj", null, null, null), 400, "cursor");
        assertRefused(endpoint.section("locks", null, null, "x".repeat(101), null, null), 400, "type");
        assertRefused(endpoint.section("row-lock-waits", null, "YWJj", null, null, null), 400, "no further pages");
        assertRefused(endpoint.section("lease-waiters", null, null, null, null, "bad\u0001name"), 400, "name");
    }

    @Test
    void forceReleaseNamesTheOperatorAndRefusesWhatIsNotLiveChangingNothing() {
        LockId held = locks.tryLock("order", "A-1", "kim");
        Lease lease =
                leases.tryAcquire("report", "server-7", Duration.ofMinutes(1)).orElseThrow();
        List<String> before = tables();

        assertRefused(endpoint.forceRelease("locks", "order", null, null, as("ops")), 400, "id is missing");
        assertRefused(endpoint.forceRelease("locks", null, "A-1", null, as("ops")), 400, "type is missing");
        assertRefused(
                endpoint.forceRelease("locks", "order", "A-2", null, as("ops")), 404, "no live lock on order A-2");
        assertRefused(endpoint.forceRelease("locks", "order", "A\u00001", null, as("ops")), 400, "id");
        assertRefused(endpoint.forceRelease("leases", null, null, null, as("ops")), 400, "name is missing");
        assertRefused(endpoint.forceRelease("leases", null, null, " ", as("ops")), 400, "name is missing");
        assertRefused(endpoint.forceRelease("leases", null, null, "other", as("ops")), 404, "no live lease other");
        assertRefused(
                endpoint.forceRelease("row-lock-waits", null, null, "x", as("ops")), 400, "only locks and leases");
        assertRefused(endpoint.forceRelease("what", null, null, "x", as("ops")), 404, "no section");
        assertRefused(
                endpoint.forceRelease("locks", "order", "A-1", null, SecurityContext.NONE),
                403,
                "authenticated principal");
        assertRefused(
                endpoint.forceRelease("leases", null, null, "report", SecurityContext.NONE),
                403,
                "authenticated principal");
        assertRefused(endpoint.forceRelease("leases", null, null, "report", as(" ")), 403, "authenticated principal");
        assertThat(tables()).isEqualTo(before);

        WebEndpointResponse<Object> broken = endpoint.forceRelease("locks", "order", "A-1", null, as("ops"));
        assertThat(broken.getStatus()).isEqualTo(200);
        assertThat(broken.getBody()).isEqualTo(new Released("locks", "order", "A-1", null, "ops"));
        assertThatThrownBy(() -> locks.checkLock(held, "order", "A-1", "kim"))
                .isInstanceOfSatisfying(
                        LockEndedException.class, e -> assertThat(e.endedBy()).contains("ops"));

        assertThat(endpoint.forceRelease("leases", null, null, "report", as("ops"))
                        .getStatus())
                .isEqualTo(200);
        assertThat(leases.find("report"))
                .hasValueSatisfying(l -> assertThat(l.isReleased()).isTrue());
        assertThat(lease.token()).isPositive();
        assertRefused(endpoint.forceRelease("leases", null, null, "report", as("ops")), 404, "no live lease");
    }
}
