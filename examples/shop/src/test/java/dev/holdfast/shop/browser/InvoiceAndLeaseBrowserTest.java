package dev.holdfast.shop.browser;

import dev.holdfast.lease.Lease;
import dev.holdfast.shop.browser.ShopServer.OrderRow;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Scenario 4 (an invoice is never issued on an address that changed after the admin read it: optimistic
 * offline lock with a read-set check) and the lease part of scenarios 5 and 6 (the admin page lists
 * leases with their fencing token and breaks them; the leased job's token is shown), with a customer
 * and an admin in two browser sessions at once. Every check of the data reads the database.
 */
class InvoiceAndLeaseBrowserTest extends TwoBrowsers {

    @Test
    void invoiceIsRefusedOnAnAddressChangedAfterTheAdminReadItAndNothingIsWritten() {
        String order = shop.newOrder("alice");
        customer.signIn("alice", "alice-pw");
        admin.signIn("kim", "kim-pw");

        admin.open("/admin/orders/" + order);
        admin.click("prepare-invoice");
        assertThat(admin.page()).isEqualTo("admin-invoice");
        assertThat(admin.text("bill-to")).contains("1 Original Road");
        admin.screenshot("scenario4-invoice-prepared");

        customer.open("/my/orders/" + order);
        customer.type("address1", "5 Moved Avenue");
        customer.click("save-shipping");
        assertThat(customer.text("notice")).contains("was changed");

        admin.click("issue-invoice");
        assertThat(admin.page()).isEqualTo("conflict");
        assertThat(admin.status()).isEqualTo(409);
        assertThat(admin.text("conflict-change"))
                .contains("alice")
                .contains("changed the shipping address to")
                .contains("5 Moved Avenue");
        assertThat(admin.text("conflict-summary")).contains("You saw version 0").contains("now at version 1");
        assertThat(admin.text("conflict-attempted"))
                .contains("issue an invoice")
                .contains("not saved");
        admin.screenshot("scenario4-invoice-refused");
        assertThat(shop.invoices(order)).isEmpty();

        // Having seen the new address, the admin prepares again and issues to it.
        admin.click("reload");
        admin.click("prepare-invoice");
        assertThat(admin.text("bill-to")).contains("5 Moved Avenue");
        admin.click("issue-invoice");
        assertThat(admin.page()).isEqualTo("admin-order");
        assertThat(admin.text("notice")).contains("was issued to").contains("5 Moved Avenue");
        assertThat(shop.invoices(order))
                .singleElement()
                .asString()
                .contains("5 Moved Avenue")
                .endsWith("@ 1 by kim");
    }

    @Test
    void tamperedForeignOrMissingInvoiceStatesAndMissingCsrfAreRefusedAndWriteNothing() {
        String orderA = shop.newOrder("alice");
        String orderB = shop.newOrder("bob");
        admin.signIn("kim", "kim-pw");
        OrderRow before = shop.row(orderA);

        // an altered state: one character of the signed payload changed
        admin.open("/admin/orders/" + orderA + "/invoice");
        admin.script(
                "var s = document.getElementById('state'); s.value = (s.value[0] === 'A' ? 'B' : 'A') + s.value.substring(1);");
        admin.click("issue-invoice");
        assertThat(admin.page()).isEqualTo("bad-request");
        assertThat(admin.status()).isEqualTo(400);
        assertThat(admin.text("problem-message")).contains("did not verify").contains("Nothing was issued");
        admin.screenshot("scenario4-tampered-state-refused");

        // order B's valid state posted for order A
        admin.open("/admin/orders/" + orderB + "/invoice");
        String stateOfB = (String) admin.script("return document.getElementById('state').value;");
        admin.open("/admin/orders/" + orderA + "/invoice");
        admin.script("document.getElementById('state').value = arguments[0];", stateOfB);
        admin.click("issue-invoice");
        assertThat(admin.status()).isEqualTo(400);

        // no state at all
        admin.open("/admin/orders/" + orderA + "/invoice");
        admin.script("document.getElementById('state').remove();");
        admin.click("issue-invoice");
        assertThat(admin.status()).isEqualTo(400);

        // another admin's state: sealed for kim, submitted by admin
        admin.open("/admin/orders/" + orderA + "/invoice");
        String kimsState = (String) admin.script("return document.getElementById('state').value;");
        admin.signIn("admin", "admin-pw");
        admin.open("/admin/orders/" + orderA + "/invoice");
        admin.script("document.getElementById('state').value = arguments[0];", kimsState);
        admin.click("issue-invoice");
        assertThat(admin.status()).isEqualTo(400);

        // no CSRF token
        admin.open("/admin/orders/" + orderA + "/invoice");
        admin.script("document.querySelector('#issue-invoice-form input[name=_csrf]').remove();");
        admin.click("issue-invoice");
        assertThat(admin.status()).isEqualTo(403);

        assertThat(shop.invoices(orderA)).isEmpty();
        assertThat(shop.invoices(orderB)).isEmpty();
        assertThat(shop.row(orderA)).isEqualTo(before);
    }

    @Test
    void adminSeesLeasesWithTheirTokenAndBreaksOne() {
        admin.signIn("kim", "kim-pw");
        String name = "test-lease-" + System.nanoTime();
        Lease held = shop.leases()
                .tryAcquire(name, "worker-7", Duration.ofMinutes(5))
                .orElseThrow();

        admin.open("/admin/locks");
        assertThat(admin.element("lease-" + name)
                        .findElement(org.openqa.selenium.By.className("lease-owner"))
                        .getText())
                .isEqualTo("worker-7");
        assertThat(admin.element("lease-" + name)
                        .findElement(org.openqa.selenium.By.className("lease-token"))
                        .getText())
                .isEqualTo(Long.toString(held.token()));

        // without the CSRF token the break is refused and the lease stays
        admin.script(
                "document.getElementById('break-lease-' + arguments[0]).form.querySelector('input[name=_csrf]').remove();",
                name);
        admin.click("break-lease-" + name);
        assertThat(admin.status()).isEqualTo(403);
        assertThat(shop.leases().find(name)).map(Lease::isReleased).contains(false);

        // a customer cannot reach the page at all
        customer.signIn("alice", "alice-pw");
        customer.open("/admin/locks");
        assertThat(customer.page()).isEqualTo("forbidden");

        admin.open("/admin/locks");
        admin.screenshot("scenario6-leases-listed");
        admin.click("break-lease-" + name);
        assertThat(admin.text("notice"))
                .contains("The lease " + name + " held by worker-7 (token " + held.token() + ")")
                .contains("was broken by kim");
        assertThat(shop.leases().find(name)).map(Lease::isReleased).contains(true);
        assertThat(shop.leases().list()).extracting(Lease::name).doesNotContain(name);
        // the next grant has a higher token: the broken holder's fenced writes are refused
        Lease next = shop.leases()
                .tryAcquire(name, "worker-8", Duration.ofSeconds(5))
                .orElseThrow();
        assertThat(next.token()).isGreaterThan(held.token());
        shop.leases().release(next);

        // blank or impossible names: 400, nothing broken
        admin.open("/admin/locks");
        admin.script(
                "var f = document.querySelector('#job-card form'); f.action = f.action.replace('run-job', 'break-lease'); "
                        + "var i = document.createElement('input'); i.type = 'hidden'; i.name = 'name'; i.value = '\\u0001'; f.appendChild(i);");
        admin.click("run-job");
        assertThat(admin.status()).isEqualTo(400);
    }

    @Test
    void theTestShopSchedulesNothingSoOnlyTheTestsStartTheJob() {
        // The job's token sequence is asserted below; a scheduled run in between would shift it (a CI flake).
        assertThat(shop.scheduledTasks()).isEmpty();
    }

    @Test
    void theLeasedJobShowsItsFencingTokenAndEachRunGetsAHigherOne() {
        admin.signIn("kim", "kim-pw");
        admin.open("/admin/locks");
        admin.click("run-job");
        assertThat(admin.text("notice")).contains("The nightly report ran on").contains("with fencing token");
        long first = Long.parseLong(admin.text("job-token"));
        assertThat(shop.jobResultToken()).isEqualTo(first);

        // while another instance holds the lease, this one skips and writes nothing
        Lease other = shop.leases()
                .tryAcquire(dev.holdfast.shop.job.NightlyReportJob.JOB, "other-instance", Duration.ofMinutes(1))
                .orElseThrow();
        admin.click("run-job");
        assertThat(admin.text("notice"))
                .contains("did not run here")
                .contains("another instance, other-instance, has been running it since");
        assertThat(shop.jobResultToken()).isEqualTo(first);
        shop.leases().release(other);

        admin.click("run-job");
        long third = Long.parseLong(admin.text("job-token"));
        assertThat(third).isGreaterThan(other.token()).isGreaterThan(first);
        assertThat(shop.jobResultToken()).isEqualTo(third);
        admin.screenshot("scenario5-job-token");
        List<String> runs = List.of(admin.text("job-runs").split("\n"));
        assertThat(runs.get(0)).startsWith("token " + third);
    }
}
