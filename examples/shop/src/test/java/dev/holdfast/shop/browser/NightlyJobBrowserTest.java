package dev.holdfast.shop.browser;

import dev.holdfast.lease.Lease;
import dev.holdfast.shop.job.NightlyReportJob;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Scenario 5 with two admins at once on one shop instance: a run of the nightly job is exclusive per
 * run (a second "Run now" while one runs is refused, although both are the same instance), and a run
 * whose lease is broken while it works says so and writes nothing, instead of a 500 page.
 *
 * <p>The shop here works 60 s per run under a 3 s lease, so the run is certainly still working when the
 * second admin acts; nothing in the test waits for a guess: the run ends only when its guard reports
 * the broken lease (its next renewal, within a second), which interrupts the work.
 */
@ExtendWith(ScreenshotOnFailure.class)
class NightlyJobBrowserTest {

    private static ShopServer shop;
    private static Browser admin;
    private static Browser kim;

    @BeforeAll
    static void start() {
        shop = ShopServer.separate("--shop.job.work=PT60S", "--shop.job.lease-ttl=PT3S");
        CompletableFuture<Browser> a = CompletableFuture.supplyAsync(() -> new Browser("job-admin", shop));
        CompletableFuture<Browser> k = CompletableFuture.supplyAsync(() -> new Browser("job-kim", shop));
        admin = a.join();
        kim = k.join();
        admin.signIn("admin", "admin-pw");
        kim.signIn("kim", "kim-pw");
    }

    @AfterAll
    static void stop() {
        try (Browser a = admin;
                Browser k = kim) {
            admin = null;
            kim = null;
        } finally {
            shop.close();
        }
    }

    @Test
    void aSecondRunIsRefusedWhileOneRunsAndARunThatLostItsLeaseSaysSoAndWritesNothing() throws Exception {
        String instance = shop.bean(NightlyReportJob.class).instanceId();
        admin.open("/admin/locks");
        kim.open("/admin/locks");

        // admin starts a run; it holds the lease and works (the request stays open while it works)
        CompletableFuture<Void> adminsRun = CompletableFuture.runAsync(() -> admin.click("run-job"));
        Lease held = shop.awaitLiveLease(NightlyReportJob.JOB);
        assertThat(held.owner()).isEqualTo(instance);

        // kim presses "Run now" on the same instance: refused, the run in progress keeps its lease
        kim.click("run-job");
        assertThat(kim.page()).isEqualTo("admin-locks");
        assertThat(kim.text("notice"))
                .startsWith("The nightly report did not run: another run on this instance (" + instance
                        + ") has been in progress since ")
                .contains("this request started nothing");
        // the same grant (owner and token); its expiry moves as the run's keep-alive renews it
        assertThat(shop.leases().find(NightlyReportJob.JOB)).hasValueSatisfying(current -> {
            assertThat(current.owner()).isEqualTo(held.owner());
            assertThat(current.token()).isEqualTo(held.token());
            assertThat(current.isReleased()).isFalse();
        });
        kim.screenshot("scenario5-second-run-refused");

        // kim breaks the lease while admin's run works: that run stops, writes nothing, and says so
        kim.open("/admin/locks");
        kim.click("break-lease-" + NightlyReportJob.JOB);
        assertThat(kim.text("notice")).contains("was broken by kim");
        adminsRun.get(30, TimeUnit.SECONDS);

        assertThat(admin.page()).isEqualTo("admin-locks");
        assertThat(admin.status()).isEqualTo(200);
        assertThat(admin.text("notice"))
                .startsWith("The nightly report on " + instance + " (fencing token " + held.token()
                        + ") lost its lease at ")
                .contains(" (broken by kim) and stopped")
                .contains("its result was not written");
        assertThat(shop.jobResultToken())
                .as("nothing written by the run that lost its lease")
                .isNull();
        List<String> runs = List.of(admin.text("job-runs").split("\n"));
        assertThat(runs).hasSize(1);
        assertThat(runs.get(0))
                .startsWith("token " + held.token() + " on " + instance)
                .contains("refused: its lease was lost at")
                .contains("nothing written");
        admin.screenshot("scenario5-run-lost-its-lease");

        // the next grant, to whoever asks, has a higher token: the stopped run's fenced writes would lose
        Lease next = shop.leases()
                .tryAcquire(NightlyReportJob.JOB, "other-instance", Duration.ofSeconds(5))
                .orElseThrow();
        assertThat(next.token()).isGreaterThan(held.token());
        shop.leases().release(next);
    }
}
