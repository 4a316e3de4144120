package dev.holdfast.shop.browser;

import dev.holdfast.lease.Lease;
import dev.holdfast.pessimistic.LockWait;
import dev.holdfast.pessimistic.PessimisticLocks;
import dev.holdfast.pessimistic.RowRef;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.shop.order.Address;
import dev.holdfast.shop.order.OrderService;
import dev.holdfast.shop.order.Receiver;
import dev.holdfast.shop.order.ShippingInfo;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 30: axe-core checks every page of the shop, in its states (signed out, as a customer, as an
 * administrator; notices, refusals, conflicts, the edit page with a live and with a lost lock and with
 * its "already editing in another tab" note; the busy, CSRF and tampered-form refusals), in the Korean
 * edition (Seoul) and the English one (UTC). No violation of impact serious or critical
 * may remain. axe-core is the npm package that the build fetches into target/axe (see the pom).
 */
class AccessibilityBrowserTest extends SeoulAndUtcBrowsers {

    static final Path AXE = Path.of("target", "axe", "node_modules", "axe-core", "axe.min.js");
    private static final Set<String> FAILING = Set.of("serious", "critical");

    static String axeSource;

    @BeforeAll
    static void readAxe() throws IOException {
        // fetched by the build in generate-test-resources (examples/shop/pom.xml)
        axeSource = Files.readString(AXE, StandardCharsets.UTF_8);
    }

    /** One violation of one axe rule on one page: the elements it found, as CSS selectors. */
    record Violation(String edition, String page, String rule, String impact, List<String> targets) {
        @Override
        public String toString() {
            return rule + " (" + impact + ") on " + edition + " " + page + ": " + String.join(" | ", targets);
        }
    }

    @Test
    void noPageHasASeriousOrCriticalViolation() throws SQLException {
        List<Violation> found = new ArrayList<>();
        int pages = 0;
        for (Browser b : List.of(utc, seoul)) {
            pages += visitEveryPage(b, found);
        }
        found.forEach(v -> System.out.println("axe: " + v));
        List<Violation> failing =
                found.stream().filter(v -> FAILING.contains(v.impact())).toList();
        assertThat(pages).as("pages checked").isEqualTo(2 * 34);
        assertThat(failing)
                .as("serious or critical accessibility violations (axe-core)")
                .isEmpty();
    }

    /** The check is live: an unlabelled input planted on a page is reported, as critical. */
    @Test
    void theCheckReportsAPlantedViolation() {
        utc.signOut();
        utc.open("/login");
        utc.script("const probe = document.createElement('input'); probe.id = 'a11y-probe';"
                + " document.querySelector('main').appendChild(probe);");
        List<Violation> found = new ArrayList<>();
        new Checker(utc, found).page("login", "login with an unlabelled input planted");
        assertThat(found)
                .filteredOn(v -> v.rule().equals("label"))
                .singleElement()
                .satisfies(v -> {
                    assertThat(v.impact()).isEqualTo("critical");
                    assertThat(v.targets()).containsExactly("#a11y-probe");
                });
    }

    /** Visits every page in its states, checking each with axe; returns how many were checked. */
    private static int visitEveryPage(Browser b, List<Violation> found) throws SQLException {
        Checker check = new Checker(b, found);
        OrderService orders = shop.bean(OrderService.class);

        // signed out
        b.signOut();
        b.open("/");
        check.page("home", "home, signed out");
        b.open("/login");
        check.page("login", "login");
        b.type("username", "alice");
        b.type("password", "wrong");
        b.click("sign-in");
        check.page("login", "login refused");
        b.open("/login?logout");
        check.page("login", "login, signed out");

        // a customer
        b.signIn("alice", "alice-pw");
        check.page("home", "home, customer");
        String order = shop.newOrder("alice");
        b.open("/my/orders");
        check.page("my-orders", "my orders");
        b.open("/my/orders/" + order);
        check.page("my-order", "my order");
        b.type("address1", "2 Saved Street");
        b.click("save-shipping");
        check.page("my-order", "my order, saved");
        b.type("address1", "");
        b.click("save-shipping");
        check.page("my-order", "my order, refused input");
        b.script("document.querySelector('#shipping-form input[name=version]').remove();");
        b.type("address1", "1 Forged Street");
        b.click("save-shipping");
        check.page("bad-request", "tampered form refused (no version)");
        b.open("/my/orders/" + order);
        b.script("document.querySelector('#shipping-form input[name=_csrf]').remove();");
        b.type("address1", "1 Forged Street");
        b.click("save-shipping");
        check.page("csrf", "form without its CSRF token refused");
        orders.changeShippingInfo(
                "alice",
                order,
                1,
                new ShippingInfo(
                        new Receiver("Test Receiver", "+1 555 0100"), new Address("99999", "3 Other Road", null)));
        b.open("/my/orders/" + order);
        orders.changeShippingInfo(
                "alice",
                order,
                2,
                new ShippingInfo(
                        new Receiver("Test Receiver", "+1 555 0100"), new Address("99999", "4 Other Road", null)));
        b.type("address1", "5 Typed Street");
        b.click("save-shipping");
        check.page("conflict", "conflict, customer");
        b.open("/my/orders/NOPE-404");
        check.page("not-found", "unknown order");
        b.open("/admin/orders");
        check.page("forbidden", "admin page refused to a customer");
        b.open("/no-such-page");
        check.page("error", "unknown address");

        // an administrator
        b.signIn("kim", "kim-pw");
        check.page("home", "home, administrator");
        String edited = shop.newOrder("alice");
        b.open("/admin/orders");
        check.page("admin-orders", "all orders");
        b.open("/admin/orders/" + edited);
        check.page("admin-order", "admin order");
        b.open("/admin/orders/" + edited + "/edit");
        check.page("admin-order-edit", "edit page");
        b.type("receiverName", "Typed Receiver");
        shop.bean(JdbcLockManager.class).forceRelease("purchase_order", edited, "admin");
        b.awaitAttribute("holdfast-lock", "data-holdfast-state", "lost");
        check.page("admin-order-edit", "edit page, lock lost");
        b.script("document.getElementById('save-edit').disabled = false;");
        b.click("save-edit");
        check.page("lock-problem", "save refused, lock broken");
        b.click("reapply");
        check.page("admin-order-edit", "edit page, reopened with the typed values");
        b.click("save-edit");
        check.page("admin-order", "admin order, saved");

        b.open("/admin/orders/" + edited + "/invoice");
        check.page("admin-invoice", "invoice");
        b.click("issue-invoice");
        check.page("admin-order", "admin order, invoice issued");

        String locked = shop.newOrder("alice");
        LockId lock =
                shop.bean(JdbcLockManager.class).tryLock("purchase_order", locked, "admin", Duration.ofMinutes(1));
        Lease lease = shop.leases()
                .tryAcquire("accessibility-lease", "shop-a11y", Duration.ofMinutes(1))
                .orElseThrow();
        try {
            b.open("/admin/orders/" + locked + "/edit");
            check.page("lock-problem", "edit refused, locked by another");
            b.open("/admin/orders/" + locked);
            check.page("admin-order", "admin order, being edited");
            b.open("/admin/locks");
            check.page("admin-locks", "locks and leases");
            b.click("run-job");
            check.page("admin-locks", "locks and leases, after a run");
        } finally {
            shop.bean(JdbcLockManager.class).releaseLock(lock, "admin");
            shop.leases().release(lease);
        }

        String busy = shop.newOrder("alice");
        b.open("/admin/orders/" + busy);
        try (Connection other = shop.dataSource().getConnection()) {
            other.setAutoCommit(false);
            PessimisticLocks.of(shop.dataSource())
                    .forUpdate(
                            other,
                            RowRef.of(shop.ordersTable(), "order_number", busy),
                            LockWait.atMost(Duration.ofSeconds(1)));
            b.click("start-shipping"); // waits out the shop's bound on the row lock
            other.rollback();
        }
        check.page("busy", "start shipping refused, order busy");

        String moved = shop.newOrder("alice");
        b.open("/admin/orders/" + moved);
        orders.changeShippingInfo(
                "alice",
                moved,
                0,
                new ShippingInfo(
                        new Receiver("Alice Moved", "+49 30 1234"), new Address("10115", "5 Moved Avenue", "Floor 3")));
        b.click("start-shipping");
        check.page("conflict", "conflict, admin");

        String shipped = shop.newOrder("alice");
        b.open("/admin/orders/" + shipped + "/edit");
        orders.startShipping("admin", shipped, 0);
        b.type("receiverName", "Too Late Receiver");
        b.click("save-edit");
        check.page("conflict", "conflict, order shipped");
        b.open("/admin/orders/" + shipped + "/edit");
        check.page("admin-order-edit", "edit page, order shipped");

        String twice = shop.newOrder("alice");
        b.open("/admin/orders/" + twice + "/edit");
        String firstTab = b.openTab();
        b.open("/admin/orders/" + twice + "/edit");
        b.await("the other-tab note", d -> b.element("other-tab").isDisplayed());
        check.page("admin-order-edit", "edit page, already editing in another tab");
        b.click("cancel-edit");
        b.closeTabAndReturnTo(firstTab);
        return check.count;
    }

    /** Runs axe on a browser's pages, collecting what it finds. */
    private static final class Checker {
        private final Browser b;
        private final List<Violation> found;
        private final String edition;
        int count;

        Checker(Browser b, List<Violation> found) {
            this.b = b;
            this.found = found;
            this.edition = b == seoul ? "ko" : "en";
        }

        /** Checks the page now shown, which must be {@code expected} (its main element's data-page). */
        @SuppressWarnings("unchecked")
        void page(String expected, String label) {
            assertThat(b.page()).as(label).isEqualTo(expected);
            b.awaitZoneReported();
            if (!Boolean.TRUE.equals(b.script("return typeof window.axe === 'object';"))) {
                b.script(axeSource);
            }
            Object result = b.asyncScript(Duration.ofSeconds(60), """
                    const done = arguments[arguments.length - 1];
                    axe.run(document, {resultTypes: ['violations']})
                      .then(r => done(r.violations.map(v => ({rule: v.id, impact: v.impact || '',
                          targets: v.nodes.map(n => n.target.join(' '))}))))
                      .catch(e => done('axe failed: ' + e));""");
            if (result instanceof String failure) {
                throw new IllegalStateException(failure + " on " + label);
            }
            for (Map<String, Object> v : (List<Map<String, Object>>) result) {
                found.add(new Violation(edition, label, (String) v.get("rule"), (String) v.get("impact"), (List<String>)
                        v.get("targets")));
            }
            count++;
        }
    }
}
