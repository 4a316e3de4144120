package dev.holdfast.shop.browser;

import dev.holdfast.lease.Lease;
import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.shop.job.NightlyReportJob;
import dev.holdfast.shop.order.OrderService;
import dev.holdfast.shop.order.Receiver;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebElement;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 55 item 12, from an independent browser replay of the shop: the "Lock waits that ran out" table
 * reads at 1280 px without wrapping (only "Blocked by", free text, wraps) and on a phone (390 px) scrolls
 * in a keyboard-focusable, named region, axe-clean; the conflict page lists only the fields the other
 * admin changed, old and new, in Korean (Seoul) and English (UTC).
 */
class AdminPagesIssue55BrowserTest extends SeoulAndUtcBrowsers {

    private static String axeSource;

    @BeforeAll
    static void readAxe() throws IOException {
        axeSource = Files.readString(AccessibilityBrowserTest.AXE, StandardCharsets.UTF_8);
    }

    @Test
    void theWaitsTableReadsAt1280AndScrollsByKeyboardOnAPhone() {
        Lease held = shop.leases()
                .tryAcquire(NightlyReportJob.JOB, "shop-elsewhere-3f9a2c1d", Duration.ofMinutes(1))
                .orElseThrow();
        try {
            for (Browser b : List.of(utc, seoul)) {
                b.signIn("admin", "admin-pw");
                b.resize(1280, 900);
                b.open("/admin/locks");
                b.click("run-job"); // refused: the lease is held elsewhere, a lock wait to list
                assertThat(b.all("#waits tbody tr")).as("lock waits listed").isNotEmpty();
                assertThat(wrappedWaitCells(b))
                        .as("cells of the waits table on two lines at 1280 px")
                        .isEmpty();
                assertThat(axe(b)).as("axe at 1280 px").isEmpty();
                b.screenshot("issue55-waits-1280");

                try {
                    b.resize(390, 844);
                    b.open("/admin/locks");
                    WebElement region = b.element("waits-region");
                    assertThat(region.getDomAttribute("role")).isEqualTo("region");
                    assertThat(region.getDomAttribute("tabindex")).isEqualTo("0");
                    assertThat(region.getDomAttribute("aria-labelledby")).isEqualTo("waits-heading");
                    assertThat(b.text("waits-heading")).isNotBlank();
                    assertThat(axe(b)).as("axe at 390 px").isEmpty();

                    // Every column header can be scrolled into the region's view by keyboard alone.
                    List<WebElement> headers = b.all("#waits thead th");
                    assertThat(headers).hasSize(4);
                    region.sendKeys(Keys.HOME);
                    assertThat(b.script("return document.activeElement.id;")).isEqualTo("waits-region");
                    for (int i = 0; i < 200 && !inView(b, headers.get(3)); i++) {
                        region.sendKeys(Keys.ARROW_RIGHT);
                    }
                    for (WebElement header : headers) {
                        assertThat(header.getText()).isNotBlank();
                    }
                    assertThat(inView(b, headers.get(3)))
                            .as("\"Blocked by\" scrolled into view by keys")
                            .isTrue();
                    b.screenshot("issue55-waits-phone");
                } finally {
                    b.resize(1280, 900);
                }
            }
        } finally {
            shop.leases().release(held);
        }
    }

    @Test
    void theConflictPageListsOnlyTheFieldsTheOtherAdminChanged() {
        OrderService orders = shop.bean(OrderService.class);
        for (Browser b : List.of(utc, seoul)) {
            String order = shop.newOrder("alice");
            b.signIn("kim", "kim-pw");
            b.open("/admin/orders/" + order); // kim sees version 0

            // Another admin edits the phone and the kettle's quantity; the receiver's name stays.
            LockId lock = orders.startEditing("admin", order).lockId();
            orders.edit("admin", order, lock, 0, new Receiver("Test Receiver", "+1 555 0199"), List.of(2));
            orders.stopEditing("admin", lock);

            b.click("start-shipping");
            assertThat(b.page()).isEqualTo("conflict");
            assertThat(b.text("conflict-change")).contains("admin").doesNotContain("Test Receiver");
            assertThat(b.all("#their-changes dd")).hasSize(2);
            assertThat(b.css("#their-receiverPhone .their-before").getText()).isEqualTo("+1 555 0100");
            assertThat(b.css("#their-receiverPhone .their-after").getText()).isEqualTo("+1 555 0199");
            assertThat(b.css("#their-quantity-0 .their-before").getText()).isEqualTo("1");
            assertThat(b.css("#their-quantity-0 .their-after").getText()).isEqualTo("2");
            List<String> labels =
                    b.all("#their-changes dt").stream().map(WebElement::getText).toList();
            if (b == seoul) {
                assertThat(b.text("conflict-change")).contains("님이").contains("다음 항목을 바꿨습니다");
                assertThat(labels).containsExactly("전화번호", "Test kettle 수량");
            } else {
                assertThat(b.text("conflict-change")).contains("changed these fields at");
                assertThat(labels).containsExactly("Phone", "Quantity of Test kettle");
            }
            assertThat(axe(b)).as("axe on the conflict page").isEmpty();
            b.screenshot("issue55-conflict-their-changes");
        }
    }

    /** Cells (and headers) of the waits table other than "Blocked by" whose text takes more than one line. */
    @SuppressWarnings("unchecked")
    private static List<String> wrappedWaitCells(Browser b) {
        return (List<String>) b.script("""
                const wrapped = [];
                for (const el of document.querySelectorAll('#waits th, #waits td:not(.wait-blocked-by)')) {
                  if (!el.textContent.trim()) continue;
                  const range = document.createRange();
                  range.selectNodeContents(el);
                  const lines = new Set(Array.from(range.getClientRects()).filter(r => r.width > 0).map(r => Math.round(r.top)));
                  if (lines.size > 1) wrapped.push(el.textContent.trim());
                }
                return wrapped;""");
    }

    /** Whether {@code header} lies wholly inside the visible part of the waits region. */
    private static boolean inView(Browser b, WebElement header) {
        return Boolean.TRUE.equals(b.script("""
                const r = document.getElementById('waits-region').getBoundingClientRect();
                const h = arguments[0].getBoundingClientRect();
                return h.left >= r.left - 1 && h.right <= r.right + 1;""", header));
    }

    /** axe's serious and critical violations on the page shown, and any scrollable-region-focusable one. */
    @SuppressWarnings("unchecked")
    private static List<String> axe(Browser b) {
        b.awaitZoneReported();
        if (!Boolean.TRUE.equals(b.script("return typeof window.axe === 'object';"))) {
            b.script(axeSource);
        }
        Object result = b.asyncScript(Duration.ofSeconds(60), """
                const done = arguments[arguments.length - 1];
                axe.run(document, {resultTypes: ['violations']})
                  .then(r => done(r.violations.map(v => ({rule: v.id, impact: v.impact || '',
                      targets: v.nodes.map(n => n.target.join(' ')).join(' | ')}))))
                  .catch(e => done('axe failed: ' + e));""");
        if (result instanceof String failure) {
            throw new IllegalStateException(failure);
        }
        return ((List<Map<String, Object>>) result)
                .stream()
                        .filter(v -> List.of("serious", "critical").contains(v.get("impact"))
                                || "scrollable-region-focusable".equals(v.get("rule")))
                        .map(v -> v.get("rule") + " (" + v.get("impact") + "): " + v.get("targets"))
                        .toList();
    }
}
