package dev.holdfast.shop.browser;

import dev.holdfast.lease.Lease;
import dev.holdfast.pessimistic.LockWait;
import dev.holdfast.pessimistic.PessimisticLocks;
import dev.holdfast.pessimistic.RowRef;
import dev.holdfast.shop.job.NightlyReportJob;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.WebElement;

import java.sql.Connection;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 29 item 5: a lock wait that runs out says who blocked it, in the viewer's language and zone.
 * The busy page names the database sessions that held the order (to admins only: other sessions'
 * users, addresses and statements are not for customers); the admin locks page lists the last waits
 * that ran out with who blocked whom, row locks and leases alike; "Run now" on a lease held elsewhere
 * names the holder with its token and expiry.
 */
class WhoBlocksBrowserTest extends SeoulAndUtcBrowsers {

    @Test
    void theBusyPageAndTheLocksPageNameWhoHeldTheOrderInKoreanAndSeoulTime() throws Exception {
        seoul.signIn("kim", "kim-pw");
        String order = shop.newOrder("bob");
        seoul.open("/admin/orders/" + order);
        String blocker;
        try (Connection other = shop.dataSource().getConnection()) {
            other.setAutoCommit(false);
            PessimisticLocks.of(shop.dataSource())
                    .forUpdate(
                            other,
                            RowRef.of(shop.ordersTable(), "order_number", order),
                            LockWait.atMost(Duration.ofSeconds(1)));
            seoul.click("start-shipping"); // waits out the shop's 3 s bound
            assertThat(seoul.page()).isEqualTo("busy");
            other.rollback();
        }
        assertThat(seoul.status()).isEqualTo(409);
        assertThat(seoul.text("blockers")).contains("주문 " + order + "을(를) 잡고 있던 쪽");
        assertThat(seoul.text("blockers-waiting")).startsWith("내 데이터베이스 세션 ");
        List<WebElement> sessions = seoul.all("#blocker-list .blocker");
        assertThat(sessions).as(seoul.text("blockers")).hasSize(1);
        blocker = sessions.get(0).getAttribute("data-session");
        assertThat(sessions.get(0).getText()).startsWith("세션 " + blocker).contains("사용자 ");
        if (ShopServer.onPostgreSql()) { // H2 keeps no transaction start
            assertThat(seoul.css("#blocker-list .blocker-since time").getText()).endsWith("KST");
        }
        seoul.screenshot("who-blocks-busy");

        seoul.open("/admin/locks");
        WebElement wait = seoul.css("#waits tbody tr");
        assertThat(wait.getAttribute("data-kind")).isEqualTo("row");
        assertThat(wait.findElement(org.openqa.selenium.By.className("wait-waiter"))
                        .getText())
                .isEqualTo("kim");
        assertThat(wait.findElement(org.openqa.selenium.By.className("wait-what"))
                        .getText())
                .isEqualTo("주문 " + order);
        assertThat(wait.findElement(org.openqa.selenium.By.className("wait-blocked-by"))
                        .getText())
                .contains("세션 " + blocker);
        assertThat(wait.findElement(org.openqa.selenium.By.tagName("time")).getText())
                .endsWith("KST");
        seoul.screenshot("who-blocks-locks");
    }

    @Test
    void aCustomerIsToldTheOrderIsBusyButNotWhichSessionsHeldIt() throws Exception {
        utc.signIn("bob", "bob-pw");
        String order = shop.newOrder("bob");
        utc.open("/my/orders/" + order);
        try (Connection other = shop.dataSource().getConnection()) {
            other.setAutoCommit(false);
            PessimisticLocks.of(shop.dataSource())
                    .forUpdate(
                            other,
                            RowRef.of(shop.ordersTable(), "order_number", order),
                            LockWait.atMost(Duration.ofSeconds(1)));
            utc.click("save-shipping");
            assertThat(utc.page()).isEqualTo("busy");
            other.rollback();
        }
        assertThat(utc.text("problem-message")).contains("Someone else is changing order " + order);
        assertThat(utc.all("#blockers")).isEmpty();
        utc.signOut();
    }

    @Test
    void runNowOnALeaseHeldElsewhereNamesTheHolderWithItsTokenAndExpiry() throws Exception {
        utc.signIn("admin", "admin-pw");
        Lease held = shop.leases()
                .tryAcquire(NightlyReportJob.JOB, "shop-elsewhere", Duration.ofMinutes(1))
                .orElseThrow();
        try {
            utc.open("/admin/locks");
            utc.click("run-job");
            assertThat(utc.text("notice"))
                    .contains("another instance, shop-elsewhere, has been running it since")
                    .contains("(token " + held.token() + ", until ");
            WebElement wait = utc.css("#waits tbody tr");
            assertThat(wait.getAttribute("data-kind")).isEqualTo("lease");
            assertThat(wait.findElement(org.openqa.selenium.By.className("wait-what"))
                            .getText())
                    .isEqualTo("lease " + NightlyReportJob.JOB);
            assertThat(wait.findElement(org.openqa.selenium.By.className("wait-blocked-by"))
                            .getText())
                    .contains("held by shop-elsewhere (token " + held.token() + ") since")
                    .contains("0 waiting ahead");
            utc.screenshot("who-blocks-lease");
        } finally {
            shop.leases().release(held);
            utc.signOut();
        }
    }
}
