package dev.holdfast.shop.browser;

import dev.holdfast.shop.browser.ShopServer.OrderRow;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Scenario 3 (an admin edits an order under an offline lock) and the offline lock part of scenario 6
 * (the admin lock page), with two admins in two browser sessions at once. The shop runs with a
 * {@value #EXPIRY_SECONDS} s lock expiry and a 1 s heartbeat ({@link ShopServer}), so expiry and extension
 * happen within seconds. Every check of the data reads the database.
 */
@ExtendWith(ScreenshotOnFailure.class)
class OfflineLockBrowserTest {

    static final long EXPIRY_SECONDS = 4;

    static ShopServer shop;
    static Browser kim;
    static Browser admin;

    @BeforeAll
    static void openBrowsers() {
        shop = ShopServer.get();
        assertThat(ShopServer.EDIT_LOCK_EXPIRY).hasSeconds(EXPIRY_SECONDS);
        CompletableFuture<Browser> k = CompletableFuture.supplyAsync(() -> new Browser("admin-kim", shop));
        CompletableFuture<Browser> a = CompletableFuture.supplyAsync(() -> new Browser("admin-admin", shop));
        kim = k.join();
        admin = a.join();
        kim.signIn("kim", "kim-pw");
        admin.signIn("admin", "admin-pw");
    }

    @AfterAll
    static void closeBrowsers() {
        try (Browser k = kim;
                Browser a = admin) {
            kim = null;
            admin = null;
        }
    }

    @Test
    void secondAdminSeesWhoEditsUntilWhenAndTheHeartbeatKeepsTheLockBeyondItsExpiry() throws Exception {
        String order = shop.newOrder("alice");
        kim.open("/admin/orders/" + order + "/edit");
        assertThat(kim.page()).isEqualTo("admin-order-edit");
        assertThat(shop.editLockOwner(order)).isEqualTo("kim");

        admin.open("/admin/orders/" + order + "/edit");
        assertThat(admin.page()).isEqualTo("lock-problem");
        assertThat(admin.status()).isEqualTo(409);
        assertThat(admin.text("lock-holder")).matches("Being edited by kim until \\d\\d:\\d\\d:\\d\\d UTC .*");
        admin.screenshot("scenario3-second-admin-sees-who-edits");
        admin.open("/admin/orders/" + order);
        assertThat(admin.text("edit-lock-holder"))
                .contains("Being edited by kim until")
                .contains("UTC");

        // Two and a half expiries later the lock still stands: only the heartbeat can have kept it.
        Thread.sleep(EXPIRY_SECONDS * 2_500);
        assertThat(shop.editLockOwner(order)).isEqualTo("kim");
        assertThat(kim.element("holdfast-lock").getDomAttribute("data-holdfast-state"))
                .isEqualTo("held");
        assertThat(kim.text("lock-text"))
                .contains("You hold the edit lock until")
                .contains("left");
        admin.open("/admin/orders/" + order + "/edit");
        assertThat(admin.page()).isEqualTo("lock-problem");
        kim.screenshot("scenario3-editor-lock-kept-alive");

        kim.type("receiverPhone", "+1 555 0199");
        kim.type("quantity-0", "3");
        kim.click("save-edit");
        assertThat(kim.page()).isEqualTo("admin-order");
        assertThat(kim.text("notice")).contains("was saved and your edit lock released");
        assertThat(shop.phoneAndQuantities(order)).isEqualTo("+1 555 0199 [3]");
        assertThat(shop.row(order).modifiedBy()).isEqualTo("kim");
        assertThat(shop.editLockOwner(order)).isNull();

        // Saving released the lock: the other admin can edit now; cancelling releases it again.
        admin.open("/admin/orders/" + order + "/edit");
        assertThat(admin.page()).isEqualTo("admin-order-edit");
        assertThat(shop.editLockOwner(order)).isEqualTo("admin");
        admin.click("cancel-edit");
        assertThat(admin.text("notice")).contains("your edit lock on order " + order + " was released");
        assertThat(shop.editLockOwner(order)).isNull();
    }

    @Test
    void staleEditorsSubmitIsRefusedOnceTheHeartbeatStopsAndTheLockExpires() {
        String order = shop.newOrder("bob");
        OrderRow before = shop.row(order);
        String linesBefore = shop.phoneAndQuantities(order);
        kim.open("/admin/orders/" + order + "/edit");
        kim.script("window.holdfastHeartbeat.stop();"); // the laptop goes to sleep
        kim.type("receiverName", "Stale Receiver");

        waitUntil("the lock expired", () -> shop.editLockOwner(order) == null, Duration.ofSeconds(EXPIRY_SECONDS * 4));
        waitUntil(
                "kim's page shows the lock lost",
                () -> "lost".equals(kim.element("holdfast-lock").getDomAttribute("data-holdfast-state")),
                Duration.ofSeconds(10));
        assertThat(kim.text("lock-text")).contains("Your edit lock is lost").contains("expired");
        assertThat(kim.element("save-edit").isEnabled()).isFalse();
        kim.screenshot("scenario3-stale-editor-warned");

        kim.script("document.getElementById('save-edit').disabled = false;"); // a page whose script never ran
        kim.click("save-edit");
        assertThat(kim.page()).isEqualTo("lock-problem");
        assertThat(kim.status()).isEqualTo(409);
        assertThat(kim.element("lock-problem-title").getText()).isEqualTo("Your edit lock expired");
        assertThat(kim.text("lock-problem-detail")).contains("Nothing was saved");
        kim.screenshot("scenario3-stale-submit-refused");
        assertThat(shop.row(order)).isEqualTo(before);
        assertThat(shop.phoneAndQuantities(order)).isEqualTo(linesBefore);

        admin.open("/admin/orders/" + order + "/edit");
        assertThat(admin.page()).isEqualTo("admin-order-edit");
        admin.click("cancel-edit");
    }

    @Test
    void reopeningTheEditPageInAnotherTabKeepsEditingThereAndTheFirstTabCanNoLongerSave() {
        String order = shop.newOrder("alice");
        admin.open("/admin/orders/" + order + "/edit");
        assertThat(admin.page()).isEqualTo("admin-order-edit");
        assertThat(admin.all("#other-tab")).isEmpty();
        String firstLockId = (String) admin.script("return document.getElementById('lockId').value;");
        OrderRow before = shop.row(order);

        String firstTab = admin.openTab(); // the same admin, the same order, a second tab (or F5)
        admin.open("/admin/orders/" + order + "/edit");
        assertThat(admin.page()).isEqualTo("admin-order-edit");
        assertThat(admin.text("other-tab"))
                .contains("already editing this order in another tab")
                .contains("can no longer save");
        admin.screenshot("scenario3-reopened-in-another-tab");
        assertThat(shop.editLockOwner(order)).isEqualTo("admin");

        // Another admin is still kept out meanwhile.
        kim.open("/admin/orders/" + order + "/edit");
        assertThat(kim.page()).isEqualTo("lock-problem");
        assertThat(kim.text("lock-holder")).startsWith("Being edited by admin until");

        // The first tab learns it at its next heartbeat (triggered here rather than waited for) ...
        String secondTab = admin.switchTo(firstTab);
        admin.type("receiverName", "Stale Tab Receiver");
        admin.script("window.holdfastHeartbeat.beat();");
        waitUntil("saving disabled", () -> !admin.element("save-edit").isEnabled(), Duration.ofSeconds(10));
        assertThat(admin.text("lock-text")).contains("lost");
        admin.screenshot("scenario3-first-tab-warned");
        // ... and the server refuses its lock id whatever the page does.
        submitEditOf(admin, order, firstLockId);
        assertRefused(admin, 409, "lock-replaced");
        assertThat(admin.text("lock-problem-title")).isEqualTo("You are editing this order in another tab");
        assertThat(admin.text("lock-problem-detail"))
                .contains("opened this order (" + order + ") for editing again at")
                .contains("UTC")
                .contains("can no longer save");
        assertThat(admin.text("lock-now-held")).startsWith("admin is editing it now, until");
        admin.screenshot("scenario3-first-tab-refused-replaced");
        assertThat(shop.row(order)).isEqualTo(before);

        admin.switchTo(secondTab);
        admin.type("receiverName", "Second Tab Receiver");
        admin.click("save-edit");
        assertThat(admin.text("notice")).contains("was saved");
        assertThat(shop.row(order).receiverName()).isEqualTo("Second Tab Receiver");
        assertThat(shop.editLockOwner(order)).isNull();
        admin.closeTabAndReturnTo(firstTab);
    }

    @Test
    void forgedForeignAndMalformedLockIdsAreRefusedAndChangeNothing() {
        String orderA = shop.newOrder("alice");
        String orderB = shop.newOrder("bob");
        admin.open("/admin/orders/" + orderA + "/edit");
        String adminsLock = (String) admin.script("return document.getElementById('lockId').value;");
        kim.open("/admin/orders/" + orderB + "/edit");
        String kimsLockOnB = (String) kim.script("return document.getElementById('lockId').value;");
        // kim's edit page of B stays open in its own tab, extending the lock, while kim forges submits
        // elsewhere: the lock on B is alive by its heartbeat, not by how fast the refusals come.
        String editTabOfB = kim.openTab();
        OrderRow before = shop.row(orderA);
        String linesBefore = shop.phoneAndQuantities(orderA);

        submitEditOf(kim, orderA, kimsLockOnB);
        assertRefused(kim, 409, "other-resource");
        submitEditOf(kim, orderA, adminsLock);
        assertRefused(kim, 409, "other-owner");
        kim.screenshot("scenario3-other-admins-lock-refused");
        submitEditOf(kim, orderA, "AAAAAAAAAAAAAAAAAAAAAA"); // well-formed, never issued
        assertRefused(kim, 409, "no-lock");
        submitEditOf(kim, orderA, "not-a-lock-id");
        assertRefused(kim, 400, "bad-lock-id");
        submitEditOf(kim, orderA, null);
        assertRefused(kim, 400, "bad-lock-id");

        assertThat(shop.row(orderA)).isEqualTo(before);
        assertThat(shop.phoneAndQuantities(orderA)).isEqualTo(linesBefore);
        assertThat(shop.editLockOwner(orderA)).isEqualTo("admin");
        assertThat(shop.editLockOwner(orderB)).isEqualTo("kim");

        // The lock holder's own form still saves: the refusals took nothing from it.
        admin.type("receiverName", "Right Receiver");
        admin.click("save-edit");
        assertThat(admin.text("notice")).contains("was saved");
        assertThat(shop.row(orderA).receiverName()).isEqualTo("Right Receiver");
        kim.closeTabAndReturnTo(editTabOfB);
        kim.open("/admin/orders/" + orderB);
        kim.script("var f = document.createElement('form'); f.method = 'post'; f.action = '/admin/orders/" + orderB
                + "/edit/cancel'; f.innerHTML = '<input name=lockId value=" + kimsLockOnB + ">' + "
                + "document.querySelector('input[name=_csrf]').outerHTML; document.body.appendChild(f); f.submit();");
        waitUntil("the lock of order B gone", () -> shop.editLockOwner(orderB) == null, Duration.ofSeconds(10));
    }

    @Test
    void editSubmitWithoutCsrfTokenIsRefused() {
        String order = shop.newOrder("alice");
        OrderRow before = shop.row(order);
        kim.open("/admin/orders/" + order + "/edit");
        kim.script("document.querySelector('#edit-form input[name=_csrf]').remove();");
        kim.type("receiverName", "No Token");
        kim.click("save-edit");
        assertThat(kim.page()).isEqualTo("csrf");
        assertThat(kim.status()).isEqualTo(403);
        assertThat(shop.row(order)).isEqualTo(before);
        assertThat(shop.editLockOwner(order)).isEqualTo("kim");
    }

    @Test
    void breakingALockOnTheAdminPageMakesTheHoldersSubmitFail() {
        String order = shop.newOrder("bob");
        OrderRow before = shop.row(order);
        kim.open("/admin/orders/" + order + "/edit");
        kim.type("receiverPhone", "+1 555 0777");

        admin.open("/admin/locks");
        assertThat(admin.page()).isEqualTo("admin-locks");
        String row = admin.text("lock-purchase_order-" + order);
        assertThat(row)
                .contains("purchase_order")
                .contains(order)
                .contains("kim")
                .contains("UTC");
        admin.screenshot("scenario6-admin-lock-page");
        admin.click("break-" + order);
        assertThat(admin.text("notice"))
                .contains("The lock on purchase_order " + order + " held by kim was broken by admin");
        assertThat(shop.editLockOwner(order)).isNull();

        waitUntil(
                "kim's page shows the lock lost",
                () -> "lost".equals(kim.element("holdfast-lock").getDomAttribute("data-holdfast-state")),
                Duration.ofSeconds(10));
        assertThat(kim.text("lock-text"))
                .contains("Your edit lock is lost")
                .containsPattern("admin broke it at \\d\\d:\\d\\d:\\d\\d UTC");
        kim.screenshot("scenario6-holder-warned-lock-broken");

        kim.script("document.getElementById('save-edit').disabled = false;");
        kim.click("save-edit");
        assertThat(kim.page()).isEqualTo("lock-problem");
        assertThat(kim.status()).isEqualTo(409);
        assertThat(kim.mainAttribute("data-code")).isEqualTo("lock-broken");
        assertThat(kim.text("lock-problem-title")).isEqualTo("Your edit lock was broken");
        assertThat(kim.text("lock-problem-detail"))
                .startsWith("admin broke your lock on this order (" + order + ") at")
                .contains("UTC");
        assertThat(kim.all("#lock-now-held")).as("nobody holds it since").isEmpty();
        assertThat(shop.row(order)).isEqualTo(before);
        assertThat(shop.phoneAndQuantities(order)).startsWith("+1 555 0100 ");

        // Nothing kim typed is lost: the refusal shows it, and one click opens the edit page again with it.
        assertThat(kim.text("typed-receiverPhone")).isEqualTo("+1 555 0777");
        assertThat(kim.all("#typed-receiverName")).as("only what kim changed").isEmpty();
        kim.screenshot("scenario4-lost-lock-keeps-typed");
        kim.click("reapply");
        assertThat(kim.page()).isEqualTo("admin-order-edit");
        assertThat(kim.element("receiverPhone").getDomProperty("value")).isEqualTo("+1 555 0777");
        assertThat(shop.editLockOwner(order)).isEqualTo("kim");
        kim.click("save-edit");
        assertThat(kim.text("notice")).contains("was saved");
        assertThat(shop.phoneAndQuantities(order)).startsWith("+1 555 0777 ");
    }

    /**
     * From the order's page, posts the edit form of {@code order} as a tampered page would: the page's
     * CSRF token, the order's version and line count, and {@code lockId} (left out if null).
     */
    private static void submitEditOf(Browser browser, String order, String lockId) {
        browser.open("/admin/orders/" + order);
        browser.script("""
                var f = document.createElement('form');
                f.method = 'post'; f.action = '/admin/orders/' + arguments[0] + '/edit'; f.id = 'forged';
                function field(n, v) { var i = document.createElement('input'); i.name = n; i.value = v; f.appendChild(i); }
                if (arguments[1] !== null) { field('lockId', arguments[1]); }
                field('version', document.querySelector('input[name=version]').value);
                field('receiverName', 'Forged Receiver'); field('receiverPhone', '+1 555 6666'); field('quantity', '9');
                field('_csrf', document.querySelector('input[name=_csrf]').value);
                var b = document.createElement('button'); b.type = 'submit'; b.id = 'forged-submit'; f.appendChild(b);
                document.body.appendChild(f);
                """, order, lockId);
        browser.click("forged-submit");
    }

    private static void assertRefused(Browser browser, int status, String code) {
        assertThat(browser.page()).isEqualTo("lock-problem");
        assertThat(browser.status()).isEqualTo(status);
        assertThat(browser.mainAttribute("data-code")).isEqualTo(code);
        assertThat(browser.text("lock-problem-detail")).containsAnyOf("Nothing was saved", "Nothing was changed");
    }

    private static void waitUntil(String what, Callable<Boolean> condition, Duration max) {
        await(what).atMost(max).pollInterval(Duration.ofMillis(100)).until(condition);
    }
}
