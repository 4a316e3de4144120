package dev.holdfast.shop.browser;

import dev.holdfast.lease.Lease;
import dev.holdfast.shop.job.NightlyReportJob;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Scenario 5 as it is deployed: two shop instances (two servers) on one PostgreSQL database, an admin
 * on each. The nightly job runs on exactly one of them; the other instance's "Run now" is refused,
 * naming the instance that holds the lease; a broken lease stops the run, which writes nothing.
 * PostgreSQL only (the build's second browser run): in-memory H2 is one server's database.
 *
 * <p>Each run works 60 s under a 3 s lease, so the run is certainly still working when the second
 * admin acts; the run ends only when its guard reports the broken lease, which interrupts the work.
 */
@EnabledIfSystemProperty(named = "shop.browser.database", matches = "postgresql")
@ExtendWith(ScreenshotOnFailure.class)
class NightlyJobTwoInstancesBrowserTest {

    private static ShopServer first;
    private static ShopServer second;
    private static Browser admin;
    private static Browser kim;

    @BeforeAll
    static void start() {
        first = ShopServer.separate("--shop.job.work=PT60S", "--shop.job.lease-ttl=PT3S");
        second = first.sibling("--shop.job.work=PT60S", "--shop.job.lease-ttl=PT3S");
        CompletableFuture<Browser> a = CompletableFuture.supplyAsync(() -> new Browser("first-instance-admin", first));
        CompletableFuture<Browser> k = CompletableFuture.supplyAsync(() -> new Browser("second-instance-kim", second));
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
            second.close();
            first.close();
        }
    }

    @Test
    void theJobRunsOnOneInstanceTheOtherIsRefusedAndABrokenLeaseStopsTheRun() throws Exception {
        String firstInstance = first.bean(NightlyReportJob.class).instanceId();
        String secondInstance = second.bean(NightlyReportJob.class).instanceId();
        assertThat(firstInstance).isNotEqualTo(secondInstance);
        admin.open("/admin/locks");
        kim.open("/admin/locks");

        CompletableFuture<Void> run = CompletableFuture.runAsync(() -> admin.click("run-job"));
        Lease held = second.awaitLiveLease(NightlyReportJob.JOB);
        assertThat(held.owner()).isEqualTo(firstInstance);

        // the other server's "Run now" is refused, naming the server that runs the job
        kim.click("run-job");
        assertThat(kim.text("notice"))
                .startsWith("The nightly report did not run here: another instance, " + firstInstance
                        + ", has been running it since ")
                .contains(" and holds its lease (token " + held.token() + ", until ");
        assertThat(second.bean(NightlyReportJob.class).skipped()).isEqualTo(1);
        kim.screenshot("scenario5-other-instance-refused");

        // kim, on the second server, breaks the lease: the run on the first stops and writes nothing
        kim.open("/admin/locks");
        kim.click("break-lease-" + NightlyReportJob.JOB);
        assertThat(kim.text("notice")).contains("was broken by kim");
        run.get(30, TimeUnit.SECONDS);
        assertThat(admin.text("notice")).contains("lost its lease at").contains("its result was not written");
        assertThat(first.jobResultToken()).isNull();
        assertThat(second.jobResultToken()).isNull();
        admin.screenshot("scenario5-first-instance-run-lost-its-lease");

        // the next grant, on either server, outranks the stopped run's token
        Lease next = second.leases()
                .tryAcquire(NightlyReportJob.JOB, secondInstance, Duration.ofSeconds(5))
                .orElseThrow();
        assertThat(next.token()).isGreaterThan(held.token());
        second.leases().release(next);
    }
}
