package dev.holdfast.shop.browser;

import dev.holdfast.lease.Lease;
import dev.holdfast.shop.job.NightlyReportJob;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.openqa.selenium.WebElement;

import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 30, the nightly job's notices, in Korean (Seoul) and English (UTC): a run refused or stopped is
 * reported in the red box with role alert, a success in the green one with role status.
 *
 * <p>Each run here works 60 s under a 3 s lease, so it is certainly still working when the other admin
 * acts; it ends only when its guard reports the broken lease (its next renewal, within a second).
 */
@ExtendWith(ScreenshotOnFailure.class)
class JobNoticesBrowserTest {

    private static final Pattern RGB = Pattern.compile("rgba?\\((\\d+), (\\d+), (\\d+)");

    private static ShopServer shop;
    private static Browser seoul;
    private static Browser utc;

    @BeforeAll
    static void start() {
        shop = ShopServer.separate("--shop.job.work=PT60S", "--shop.job.lease-ttl=PT3S");
        CompletableFuture<Browser> s =
                CompletableFuture.supplyAsync(() -> new Browser("job-seoul-ko", shop, "Asia/Seoul", "ko-KR"));
        CompletableFuture<Browser> u =
                CompletableFuture.supplyAsync(() -> new Browser("job-utc-en", shop, "UTC", "en-US"));
        seoul = s.join();
        utc = u.join();
        seoul.signIn("admin", "admin-pw");
        utc.signIn("kim", "kim-pw");
    }

    @AfterAll
    static void stop() {
        try (Browser s = seoul;
                Browser u = utc) {
            seoul = null;
            utc = null;
        } finally {
            shop.close();
        }
    }

    /** Item 7: failures and refusals in the red box (role alert, warning icon), successes in the green one. */
    @Test
    void refusedAndStoppedRunsAreRedAlertsAndABrokenLeaseIsAGreenStatus() throws Exception {
        for (List<Browser> pair : List.of(List.of(seoul, utc), List.of(utc, seoul))) {
            Browser runner = pair.get(0);
            Browser other = pair.get(1);
            runner.open("/admin/locks");
            other.open("/admin/locks");
            CompletableFuture<Void> run = CompletableFuture.runAsync(() -> runner.click("run-job"));
            awaitLiveLease();

            other.click("run-job"); // refused: the lease is held
            assertFailure(other);
            other.screenshot("job-refused-notice");

            other.open("/admin/locks");
            other.click("break-lease-" + NightlyReportJob.JOB);
            assertSuccess(other);

            run.get(30, TimeUnit.SECONDS); // the run learns at its next renewal and stops
            assertFailure(runner);
            assertThat(runner.text("notice")).contains(runner == seoul ? "리스를 잃고" : "lost its lease");
            // item 10: the notice's and the run list's times are <time> elements too
            assertThat(runner.all("#notice time")).hasSize(1);
            assertThat(runner.all("#job-runs time")).isNotEmpty();
            assertThat(runner.plainTimes()).isEmpty();
            runner.screenshot("job-lease-lost-notice");
        }
    }

    /**
     * Item 6: "Run now" refused on the instance whose own run holds the lease says that another run of
     * this instance is in progress and since when (the lease's grant, in the viewer's zone).
     */
    @Test
    void aRunRefusedOnItsOwnInstanceSaysAnotherRunOfItIsInProgressAndSinceWhen() throws Exception {
        String instance = shop.bean(NightlyReportJob.class).instanceId();
        for (List<Browser> pair : List.of(List.of(seoul, utc), List.of(utc, seoul))) {
            Browser runner = pair.get(0);
            Browser other = pair.get(1);
            runner.open("/admin/locks");
            other.open("/admin/locks");
            CompletableFuture<Void> run = CompletableFuture.runAsync(() -> runner.click("run-job"));
            Lease held = awaitLiveLease();

            other.click("run-job");
            ZoneId zone = ZoneId.of(other == seoul ? "Asia/Seoul" : "UTC");
            String since = DateTimeFormatter.ofPattern("HH:mm:ss zzz", Locale.ENGLISH)
                    .withZone(zone)
                    .format(held.acquiredAt());
            String notice = other.text("notice");
            // The holder's token and expiry as the refusal read them (a renewal may move the expiry since).
            String clock = "\\d\\d:\\d\\d:\\d\\d [A-Z]{3,4}";
            if (other == seoul) {
                assertThat(notice)
                        .matches(Pattern.quote("야간 보고서를 실행하지 않았습니다. 이 인스턴스(" + instance + ")에서 " + since
                                        + "부터 다른 실행이 진행 중이며 리스를 갖고 있습니다(토큰 " + held.token() + ", 갱신하지 않으면 ")
                                + clock
                                + Pattern.quote("까지). 그 실행은 계속되고, 이 요청으로는 아무것도 시작하지 않았습니다."));
            } else {
                assertThat(notice)
                        .matches(Pattern.quote("The nightly report did not run: another run on this instance ("
                                        + instance + ") has been in progress since " + since
                                        + " and holds its lease (token " + held.token() + ", until ")
                                + clock
                                + Pattern.quote(" unless renewed). That run goes on; this request started nothing."));
            }
            assertThat(other.text("instance-id")).isEqualTo(instance);
            assertThat(other.css("#notice time").getDomAttribute("datetime"))
                    .isEqualTo(held.acquiredAt().toString());
            other.screenshot("job-refused-same-instance");

            // Issue 55 item 12: the locks page lists the refusal as the admin's, not as the instance waiting on itself.
            other.open("/admin/locks");
            String pressedBy = other == seoul ? "admin" : "kim";
            WebElement wait = other.css("#waits tbody tr");
            assertThat(wait.getDomAttribute("data-kind")).isEqualTo("lease");
            String waiter = wait.findElement(org.openqa.selenium.By.className("wait-waiter"))
                    .getText();
            String blockedBy = wait.findElement(org.openqa.selenium.By.className("wait-blocked-by"))
                    .getText();
            if (other == seoul) {
                assertThat(waiter).isEqualTo(pressedBy + "(" + instance + "에서 지금 실행)");
                assertThat(blockedBy)
                        .startsWith("같은 인스턴스에서 먼저 시작해 아직 진행 중인 실행(토큰 " + held.token() + ")")
                        .doesNotContain(instance + " 소유");
            } else {
                assertThat(waiter).isEqualTo(pressedBy + " (Run now on " + instance + ")");
                assertThat(blockedBy)
                        .startsWith(
                                "an earlier run on this same instance, still in progress (token " + held.token() + ")")
                        .doesNotContain("held by " + instance);
            }
            other.screenshot("job-refused-same-instance-waits");
            other.click("break-lease-" + NightlyReportJob.JOB);
            run.get(30, TimeUnit.SECONDS);
        }
    }

    private static void assertFailure(Browser b) {
        WebElement notice = b.element("notice");
        assertThat(notice.getDomAttribute("role")).isEqualTo("alert");
        assertThat(notice.getDomAttribute("data-kind")).isEqualTo("error");
        int[] rgb = rgb(notice.getCssValue("background-color"));
        assertThat(rgb[0]).as("a red background").isGreaterThan(rgb[1]);
        rgb = rgb(notice.getCssValue("color"));
        assertThat(rgb[0]).as("red text").isGreaterThan(rgb[1]);
        assertThat(icon(b)).isEqualTo("\"\u26A0\" / \"\"");
    }

    private static void assertSuccess(Browser b) {
        WebElement notice = b.element("notice");
        assertThat(notice.getDomAttribute("role")).isEqualTo("status");
        assertThat(notice.getDomAttribute("data-kind")).isEqualTo("success");
        int[] rgb = rgb(notice.getCssValue("background-color"));
        assertThat(rgb[1]).as("a green background").isGreaterThan(rgb[0]);
        assertThat(icon(b)).isEqualTo("\"\u2713\" / \"\"");
    }

    /** The notice's icon: the content of its ::before (with its empty alternative text for screen readers). */
    private static String icon(Browser b) {
        return (String) b.script("return getComputedStyle(document.getElementById('notice'), '::before').content;");
    }

    private static int[] rgb(String css) {
        Matcher m = RGB.matcher(css);
        assertThat(m.find()).as(css).isTrue();
        return new int[] {Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3))};
    }

    private static Lease awaitLiveLease() {
        return shop.awaitLiveLease(NightlyReportJob.JOB);
    }
}
