package dev.holdfast.shop.browser;

import dev.holdfast.shop.order.Address;
import dev.holdfast.shop.order.OrderService;
import dev.holdfast.shop.order.Receiver;
import dev.holdfast.shop.order.ShippingInfo;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.WebElement;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 30: the places where a user was confused or lost work, each seen by a Korean browser in Seoul
 * and an English one in UTC.
 */
class RoughEdgesBrowserTest extends SeoulAndUtcBrowsers {

    /** What a language calls the phone in a one-line address, and what the other one calls it. */
    private record Edition(Browser browser, String phone, String foreignPhone) {}

    private static List<Edition> editions() {
        return List.of(new Edition(seoul, "전화", "phone"), new Edition(utc, "phone", "전화"));
    }

    /** Item 1: the one-line address comes from the message bundles on every page that shows it. */
    @Test
    void oneLineAddressesAreInTheViewersLanguageOnEveryPage() {
        for (Edition e : editions()) {
            Browser b = e.browser();
            String order = shop.newOrder("alice");
            b.signIn("kim", "kim-pw");
            b.open("/admin/orders/" + order);
            // alice moves the parcel while kim looks at version 0
            shop.bean(OrderService.class)
                    .changeShippingInfo(
                            "alice",
                            order,
                            0,
                            new ShippingInfo(
                                    new Receiver("Alice Moved", "+49 30 1234"),
                                    new Address("10115", "5 Moved Avenue", "Floor 3")));

            b.click("start-shipping");
            assertThat(b.page()).isEqualTo("conflict");
            String shown = e.phone() + " +49 30 1234";
            assertThat(b.css("#their-address1 .their-after").getText()).isEqualTo("5 Moved Avenue");
            assertThat(b.css("#their-receiverPhone .their-after").getText()).isEqualTo("+49 30 1234");
            assertThat(b.text("last-change-text"))
                    .contains("5 Moved Avenue")
                    .contains(shown)
                    .doesNotContain(e.foreignPhone());
            b.screenshot("one-line-conflict");

            b.open("/admin/orders");
            String listed = b.css("#order-" + order + " td:nth-child(4)").getText();
            assertThat(listed)
                    .isEqualTo(b == seoul ? "(10115) 5 Moved Avenue, Floor 3" : "5 Moved Avenue, Floor 3 (10115)");

            b.open("/admin/orders/" + order + "/invoice");
            assertThat(b.text("bill-to")).isEqualTo("Alice Moved, " + listed + ", " + shown);
            b.click("issue-invoice");
            assertThat(b.text("notice")).contains(listed).contains(shown).doesNotContain(e.foreignPhone());
            assertThat(b.text("invoices")).contains(listed).contains(shown).doesNotContain(e.foreignPhone());
            b.screenshot("one-line-invoice-issued");

            b.signIn("alice", "alice-pw");
            b.open("/my/orders");
            assertThat(b.css("#order-" + order + " td:nth-child(4)").getText()).isEqualTo(listed);
            b.open("/my/orders/" + order);
            assertThat(b.text("last-change-text")).contains(shown).doesNotContain(e.foreignPhone());
        }
    }

    /**
     * Item 5: a refusal lists what the user changed, once, in "Your changes"; the request's summary
     * does not quote the fields they left alone (the customer's phone, the admin's receiver).
     */
    @Test
    void aRefusalShowsTheUsersOwnChangesOnlyInOnePlace() {
        for (Edition e : editions()) {
            Browser b = e.browser();
            OrderService orders = shop.bean(OrderService.class);

            // A customer changes the street only; the order moved on meanwhile (alice in another tab).
            String order = shop.newOrder("alice");
            b.signIn("alice", "alice-pw");
            b.open("/my/orders/" + order);
            orders.changeShippingInfo(
                    "alice",
                    order,
                    0,
                    new ShippingInfo(
                            new Receiver("Test Receiver", "+1 555 0100"),
                            new Address("99999", "1 Original Road", null)));
            b.type("address1", "12 Typed Street");
            b.click("save-shipping");
            assertThat(b.page()).isEqualTo("conflict");
            assertThat(b.text("conflict-attempted"))
                    .doesNotContain("+1 555 0100")
                    .doesNotContain("Test Receiver")
                    .doesNotContain("12 Typed Street")
                    .doesNotContain(e.phone());
            assertThat(b.text("your-changes"))
                    .contains("12 Typed Street")
                    .doesNotContain("+1 555 0100")
                    .doesNotContain("Test Receiver");
            assertThat(b.all("#your-changes dd")).hasSize(1);
            b.screenshot("refusal-own-changes-customer");

            // An admin changes a quantity only; the customer moved the parcel meanwhile.
            String edited = shop.newOrder("alice");
            b.signIn("kim", "kim-pw");
            b.open("/admin/orders/" + edited + "/edit");
            assertThat(b.page()).isEqualTo("admin-order-edit");
            orders.changeShippingInfo(
                    "alice",
                    edited,
                    0,
                    new ShippingInfo(
                            new Receiver("Test Receiver", "+1 555 0100"), new Address("99999", "2 Other Road", null)));
            b.type("quantity-0", "4");
            b.click("save-edit");
            assertThat(b.page()).isEqualTo("conflict");
            assertThat(b.text("conflict-attempted"))
                    .doesNotContain("Test Receiver")
                    .doesNotContain("+1 555 0100");
            assertThat(b.all("#your-changes dd")).hasSize(1);
            assertThat(b.text("typed-quantity")).isEqualTo("4");
            b.open("/admin/orders/" + edited + "/edit"); // the refused page still held the lock: take it and let it go
            b.click("cancel-edit");
        }
    }

    /**
     * Item 4: once shipping has started, a refusal keeps the typed values but offers no re-apply
     * (it could only fail) and says why.
     */
    @Test
    void aShippedOrderOffersNoReapplyAndSaysWhy() {
        for (Edition e : editions()) {
            Browser b = e.browser();
            OrderService orders = shop.bean(OrderService.class);
            String shipped = b == seoul ? "출고 시작" : "Shipping started";

            String order = shop.newOrder("alice");
            b.signIn("alice", "alice-pw");
            b.open("/my/orders/" + order);
            orders.startShipping("admin", order, 0);
            b.type("address1", "7 Too Late Lane");
            b.click("save-shipping");
            assertThat(b.page()).isEqualTo("conflict");
            assertThat(b.text("typed-address1")).isEqualTo("7 Too Late Lane");
            assertThat(b.all("#reapply")).isEmpty();
            assertThat(b.text("reapply-impossible")).contains(shipped);
            assertThat(b.all("#reload")).hasSize(1);
            b.screenshot("shipped-no-reapply-customer");

            String edited = shop.newOrder("alice");
            b.signIn("kim", "kim-pw");
            b.open("/admin/orders/" + edited + "/edit");
            assertThat(b.page()).isEqualTo("admin-order-edit");
            orders.startShipping("admin", edited, 0);
            b.type("receiverName", "Too Late Receiver");
            b.click("save-edit");
            assertThat(b.page()).isEqualTo("conflict");
            assertThat(b.text("typed-receiverName")).isEqualTo("Too Late Receiver");
            assertThat(b.all("#reapply")).isEmpty();
            assertThat(b.text("reapply-impossible")).contains(shipped);
            assertThat(shop.row(edited).receiverName()).isEqualTo("Test Receiver");
            b.open("/admin/orders/" + edited + "/edit"); // take the refused page's lock and let it go
            b.click("cancel-edit");
        }
    }

    /** Item 8: the heartbeat's red box names who broke the lock and when, in the viewer's zone and language. */
    @Test
    void theHeartbeatSaysWhoBrokeTheLockAndWhen() {
        for (Edition e : editions()) {
            Browser holder = e.browser();
            Browser breaker = holder == seoul ? utc : seoul;
            String order = shop.newOrder("alice");
            holder.signIn("kim", "kim-pw");
            breaker.signIn("admin", "admin-pw");
            holder.open("/admin/orders/" + order + "/edit");
            assertThat(holder.page()).isEqualTo("admin-order-edit");

            breaker.open("/admin/locks");
            breaker.click("break-" + order);
            assertThat(shop.editLockOwner(order)).isNull();

            holder.awaitAttribute("holdfast-lock", "data-holdfast-state", "lost");
            String lost = holder.text("lock-text");
            if (holder == seoul) {
                assertThat(lost)
                        .containsPattern("admin 님이 \\d\\d:\\d\\d:\\d\\d KST에 잠금을 강제로 해제했습니다")
                        .doesNotContain("관리자가");
            } else {
                assertThat(lost)
                        .containsPattern("admin broke it at \\d\\d:\\d\\d:\\d\\d UTC")
                        .doesNotContain("an administrator");
            }
            holder.screenshot("heartbeat-names-breaker");
        }
    }

    /**
     * Item 2: reloading the edit page or switching its language keeps the lock without claiming another
     * tab; a real second tab is still told, in the page's language.
     */
    @Test
    void aReloadOrALanguageSwitchIsNotASecondTab() {
        for (Edition e : editions()) {
            Browser b = e.browser();
            String order = shop.newOrder("alice");
            b.signIn("kim", "kim-pw");
            b.open("/admin/orders/" + order + "/edit");
            assertOtherTabNote(b, false);

            b.reload();
            assertThat(b.page()).isEqualTo("admin-order-edit");
            assertOtherTabNote(b, false);

            String other = b == seoul ? "lang-en" : "lang-ko";
            String back = b == seoul ? "lang-ko" : "lang-en";
            b.click(other);
            assertThat(b.page()).isEqualTo("admin-order-edit");
            assertOtherTabNote(b, false);
            b.click(back);
            assertOtherTabNote(b, false);
            assertThat(shop.editLockOwner(order)).isEqualTo("kim");

            String firstTab = b.openTab();
            b.open("/admin/orders/" + order + "/edit");
            assertOtherTabNote(b, true);
            assertThat(b.text("other-tab"))
                    .contains(b == seoul ? "다른 탭이나 창에서 수정 중" : "already editing this order in another tab");
            b.screenshot("second-tab-told");

            // back in the first tab, a reload there replaces the second tab's lock: that is worth telling
            String secondTab = b.switchTo(firstTab);
            b.reload();
            assertOtherTabNote(b, true);
            b.click("cancel-edit");
            b.switchTo(secondTab);
            b.closeTabAndReturnTo(firstTab);
        }
    }

    /**
     * Item 3: when the heartbeat finds the lock lost while the admin types, the red box offers to open
     * the page again with a new lock and what was typed; saving then keeps it.
     */
    @Test
    void typedValuesSurviveTheHeartbeatsRedWarning() {
        for (Edition e : editions()) {
            Browser b = e.browser();
            String order = shop.newOrder("alice");
            b.signIn("kim", "kim-pw");
            b.open("/admin/orders/" + order + "/edit");
            b.type("receiverName", "Kept Receiver");
            b.type("quantity-0", "5");

            // the lock ends under the typing admin (an operator breaks it)
            shop.bean(dev.holdfast.pessimistic.offline.JdbcLockManager.class)
                    .forceRelease("purchase_order", order, "admin");
            b.awaitAttribute("holdfast-lock", "data-holdfast-state", "lost");
            assertThat(b.element("save-edit").isEnabled()).isFalse();
            assertThat(b.text("lock-text"))
                    .contains(b == seoul ? "내 변경을 채운 채로 다시 열면" : "Open it again with your changes");
            assertThat(b.element("reopen-with-changes").isDisplayed()).isTrue();
            b.screenshot("heartbeat-lost-keeps-typed");

            b.click("reopen-with-changes");
            assertThat(b.page()).isEqualTo("admin-order-edit");
            assertThat(b.element("receiverName").getDomProperty("value")).isEqualTo("Kept Receiver");
            assertThat(b.element("quantity-0").getDomProperty("value")).isEqualTo("5");
            assertThat(b.element("receiverPhone").getDomProperty("value")).isEqualTo("+1 555 0100");
            assertThat(shop.editLockOwner(order)).isEqualTo("kim");
            b.click("save-edit");
            assertThat(b.page()).isEqualTo("admin-order");
            assertThat(shop.row(order).receiverName()).isEqualTo("Kept Receiver");
            assertThat(shop.phoneAndQuantities(order)).isEqualTo("+1 555 0100 [5]");
        }
    }

    /**
     * Item 10: every time a page shows is a {@code <time>} element in the viewer's zone, with the UTC
     * hint on hover only for a viewer who is not in UTC: the order pages, the locks page with its job
     * runs, the edit page, a conflict and a lock refusal.
     */
    @Test
    void everyTimeIsATimeElementWithAUtcHintOnlyOutsideUtc() {
        for (Edition e : editions()) {
            Browser b = e.browser();
            Browser other = b == seoul ? utc : seoul;
            String order = shop.newOrder("alice");
            b.signIn("kim", "kim-pw");
            other.signIn("admin", "admin-pw");

            b.open("/admin/locks");
            b.click("run-job"); // a run of the (instant) nightly job for the run list
            assertTimesAreElements(b, "locks page with a job run");
            b.open("/admin/orders");
            assertTimesAreElements(b, "order list");

            b.open("/admin/orders/" + order + "/edit");
            other.open("/admin/orders/" + order);
            assertTimesAreElements(other, "order page with its edit lock");
            b.type("receiverName", "Someone");
            other.open("/admin/locks");
            other.click("break-" + order);
            b.awaitAttribute("holdfast-lock", "data-holdfast-state", "lost");
            b.script("document.getElementById('save-edit').disabled = false;");
            b.click("save-edit");
            assertThat(b.page()).isEqualTo("lock-problem");
            assertThat(b.all("#lock-problem-detail time")).hasSize(1);
            assertTimesAreElements(b, "lock-broken refusal");

            b.open("/admin/orders/" + order);
            shop.bean(OrderService.class)
                    .changeShippingInfo(
                            "alice",
                            order,
                            0,
                            new ShippingInfo(
                                    new Receiver("Test Receiver", "+1 555 0100"),
                                    new Address("12345", "3 Later Road", null)));
            b.click("start-shipping");
            assertThat(b.page()).isEqualTo("conflict");
            assertTimesAreElements(b, "conflict");
        }
    }

    /**
     * Item 10: the footer promises the UTC time on hover only to a viewer who gets it; a viewer in UTC,
     * whose times have no hover title, is told only the zone.
     */
    @Test
    void theFooterPromisesUtcOnHoverOnlyOutsideUtc() {
        for (Edition e : editions()) {
            Browser b = e.browser();
            b.signIn("kim", "kim-pw");
            b.open("/admin/orders");
            if (b == seoul) {
                assertThat(b.text("zone-note"))
                        .isEqualTo("시각은 Asia/Seoul 기준으로 표시합니다. 시각 위에 마우스를 올리면 UTC 시각을 볼 수 있습니다.");
                assertThat(b.timeTitles()).isNotEmpty().allMatch(t -> t.endsWith(" UTC"));
            } else {
                assertThat(b.text("zone-note")).isEqualTo("Times are shown in UTC.");
                assertThat(b.timeTitles()).isNotEmpty().allMatch(String::isEmpty);
                b.click("lang-ko"); // the Korean edition, for a viewer in UTC
                assertThat(b.text("zone-note")).isEqualTo("시각은 UTC 기준으로 표시합니다.");
                b.click("lang-en");
            }
        }
    }

    /**
     * Item 10, the lock timer: the edit page's heartbeat line shows its expiry as a {@code <time>} in the
     * viewer's zone (UTC on hover, none for a UTC viewer) before and after its beats extend the lock, and
     * the red box's "broke it at" time is one too.
     */
    @Test
    void theLockTimerShowsItsTimesAsTimeElements() {
        for (Edition e : editions()) {
            Browser b = e.browser();
            Browser breaker = b == seoul ? utc : seoul;
            String held = b == seoul ? "까지 수정 잠금을 갖고 있습니다(" : "You hold the edit lock until ";
            String order = shop.newOrder("alice");
            b.signIn("kim", "kim-pw");
            breaker.signIn("admin", "admin-pw");
            b.open("/admin/orders/" + order + "/edit");
            assertThat(b.page()).isEqualTo("admin-order-edit");

            // as the page was rendered (or after its first beat), then after a beat moved the expiry
            LockLine first = assertHeldLine(b, order, held);
            b.await("a beat moved the expiry", d -> {
                LockLine now = LockLine.of(b);
                return now.times() == 1 && !now.datetime().equals(first.datetime());
            });
            LockLine later = assertHeldLine(b, order, held);
            assertThat(later.text()).containsPattern(b == seoul ? "\\(\\d+:\\d\\d 남음\\)" : "\\(\\d+:\\d\\d left\\)");
            assertThat(b.plainTimes())
                    .as("times as plain text on the edit page")
                    .isEmpty();
            b.screenshot("lock-timer-time-element");

            breaker.open("/admin/locks");
            Instant broken = Instant.now();
            breaker.click("break-" + order);
            b.awaitAttribute("holdfast-lock", "data-holdfast-state", "lost");
            LockLine lost = LockLine.of(b);
            assertThat(lost.times()).as("times in the red box").isEqualTo(1);
            Instant at = Instant.parse(lost.datetime());
            assertThat(Duration.between(broken, at).abs()).isLessThan(Duration.ofSeconds(5));
            assertTimeElement(b, lost, at);
            assertThat(lost.text())
                    .contains(
                            b == seoul
                                    ? "admin 님이 " + clock(b, at) + "에 잠금을 강제로 해제했습니다"
                                    : "admin broke it at " + clock(b, at) + ".");
            assertThat(b.plainTimes()).as("times as plain text in the red box").isEmpty();
        }
    }

    /**
     * The heartbeat line at one moment (its script rewrites it four times a second): its text, how many
     * {@code <time>} elements it has, and the first one's datetime, title, class and text.
     */
    private record LockLine(String text, long times, String datetime, String title, String cls, String shown) {

        @SuppressWarnings("unchecked")
        static LockLine of(Browser b) {
            java.util.Map<String, Object> m = (java.util.Map<String, Object>) b.script("""
                    const line = document.getElementById('lock-text');
                    const times = line.querySelectorAll('time');
                    const t = times[0];
                    return {text: line.textContent, times: times.length,
                            datetime: t ? t.getAttribute('datetime') : null, title: t ? t.getAttribute('title') : null,
                            cls: t ? t.getAttribute('class') : null, shown: t ? t.textContent : null};""");
            return new LockLine(
                    (String) m.get("text"),
                    ((Number) m.get("times")).longValue(),
                    (String) m.get("datetime"),
                    (String) m.get("title"),
                    (String) m.get("cls"),
                    (String) m.get("shown"));
        }
    }

    /** The heartbeat line holds one {@code <time>}: the lock's expiry, after {@code held}'s words; returns the line. */
    private static LockLine assertHeldLine(Browser b, String order, String held) {
        LockLine line = LockLine.of(b);
        assertThat(line.times())
                .as("times in the heartbeat line: " + line.text())
                .isEqualTo(1);
        Instant at = Instant.parse(line.datetime());
        Instant stored = shop.bean(dev.holdfast.pessimistic.offline.JdbcLockManager.class)
                .holder(OrderService.EDIT_LOCK_TYPE, order)
                .orElseThrow()
                .expiresAt();
        assertThat(Duration.between(at, stored).abs())
                .as("the shown expiry against the stored one")
                .isLessThan(Duration.ofSeconds(3));
        assertTimeElement(b, line, at);
        assertThat(line.text()).contains(b == seoul ? clock(b, at) + held : held + clock(b, at) + " (");
        return line;
    }

    /** A {@code <time>} as the shop renders them: the viewer's clock, UTC on hover unless the viewer is in UTC. */
    private static void assertTimeElement(Browser b, LockLine line, Instant at) {
        assertThat(line.shown()).isEqualTo(clock(b, at));
        assertThat(line.cls()).isEqualTo("instant");
        if (b == utc) {
            assertThat(line.title()).as("UTC hint for a UTC viewer").isNull();
        } else {
            assertThat(line.title())
                    .isEqualTo(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'")
                            .withZone(ZoneOffset.UTC)
                            .format(at));
        }
    }

    /** The clock time as the shop shows it to this browser (format.clock in its zone and language). */
    private static String clock(Browser b, Instant at) {
        return b == seoul
                ? DateTimeFormatter.ofPattern("HH:mm:ss zzz", Locale.KOREAN)
                        .withZone(ZoneId.of("Asia/Seoul"))
                        .format(at)
                : DateTimeFormatter.ofPattern("HH:mm:ss zzz", Locale.ENGLISH)
                        .withZone(ZoneId.of("UTC"))
                        .format(at);
    }

    private static void assertTimesAreElements(Browser b, String page) {
        assertThat(b.plainTimes()).as("times as plain text on the " + page).isEmpty();
        List<String> titles = b.timeTitles();
        assertThat(titles).as("times on the " + page).isNotEmpty();
        if (b == utc) {
            assertThat(titles).as("no UTC hint for a UTC viewer on the " + page).allMatch(String::isEmpty);
        } else {
            assertThat(titles).as("UTC hints on the " + page).allMatch(t -> t.endsWith(" UTC"));
        }
    }

    /**
     * Item 9: the admin tables keep ids, times and buttons on one line at 1280 px, and on a phone
     * (390 px) the page does not scroll sideways (a wide table scrolls in its own box); quantity inputs
     * are styled like the other inputs and wide enough for two digits.
     */
    @Test
    void adminTablesReadAt1280AndOnAPhoneAndQuantityInputsAreStyled() {
        Browser b = utc;
        String order = shop.newOrder("alice");
        b.signIn("kim", "kim-pw");
        seoul.signIn("admin", "admin-pw");
        seoul.open("/admin/orders/" + order + "/edit"); // a lock to list
        dev.holdfast.lease.Lease lease = shop.leases()
                .tryAcquire("a-rather-long-lease-name-for-the-table", "shop-3f9a2c1d", java.time.Duration.ofMinutes(1))
                .orElseThrow();
        try {
            WebElement quantity = seoul.element("quantity-0");
            assertThat(quantity.getSize().getWidth()).isGreaterThanOrEqualTo(64);
            assertThat(quantity.getCssValue("border-top-left-radius")).isEqualTo("6px");
            assertThat(quantity.getCssValue("border-top-color"))
                    .isEqualTo(seoul.element("receiverName").getCssValue("border-top-color"));

            b.open("/admin/locks");
            assertThat(wrappedCells(b))
                    .as("cells broken onto two lines at 1280 px")
                    .isEmpty();
            assertThat(overflow(b)).as("page wider than the window at 1280 px").isLessThanOrEqualTo(0);
            b.screenshot("admin-locks-1280");

            b.resize(390, 844);
            for (String page : List.of("/admin/locks", "/admin/orders", "/admin/orders/" + order, "/my/orders")) {
                if (page.startsWith("/my")) {
                    b.signIn("alice", "alice-pw");
                }
                b.open(page);
                assertThat(overflow(b)).as("page wider than a phone: " + page).isLessThanOrEqualTo(0);
            }
            b.signIn("kim", "kim-pw");
            b.open("/admin/locks");
            b.screenshot("admin-locks-phone");
        } finally {
            b.resize(1280, 900);
            shop.leases().release(lease);
            seoul.open("/admin/orders/" + order + "/edit");
            seoul.click("cancel-edit");
        }
    }

    /** Cells of the locks and leases tables whose id, time or button takes more than one line. */
    @SuppressWarnings("unchecked")
    private static List<String> wrappedCells(Browser b) {
        return (List<String>) b.script("""
                const wrapped = [];
                for (const el of document.querySelectorAll('#locks td, #leases td, #locks button, #leases button')) {
                  const target = el.matches('td') && el.querySelector('button') ? null : el;
                  if (!target || !target.textContent.trim()) continue;
                  const range = document.createRange();
                  range.selectNodeContents(target);
                  const lines = new Set(Array.from(range.getClientRects()).filter(r => r.width > 0).map(r => Math.round(r.top)));
                  if (lines.size > 1) wrapped.push(target.textContent.trim());
                }
                return wrapped;""");
    }

    /** How many CSS pixels the page is wider than the window (0 or less: no sideways scrolling). */
    private static long overflow(Browser b) {
        return ((Number) b.script("return document.documentElement.scrollWidth - window.innerWidth;")).longValue();
    }

    /** Whether the edit page shows "already editing in another tab" (its script runs before the page has loaded). */
    private static void assertOtherTabNote(Browser b, boolean shown) {
        assertThat(b.page()).isEqualTo("admin-order-edit");
        assertThat(b.all("#other-tab").stream().anyMatch(WebElement::isDisplayed))
                .as("other-tab note shown")
                .isEqualTo(shown);
    }
}
