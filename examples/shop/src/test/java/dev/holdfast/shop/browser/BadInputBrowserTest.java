package dev.holdfast.shop.browser;

import dev.holdfast.shop.browser.ShopServer.OrderRow;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Forged and broken requests, sent from a real page whose form was tampered with in the browser: each
 * gets a clear page and status, and the order in the database is exactly as before.
 */
class BadInputBrowserTest extends TwoBrowsers {

    @Test
    void shippingFormWithoutVersionIsRefused() {
        String order = shop.newOrder("alice");
        OrderRow before = shop.row(order);
        customer.signIn("alice", "alice-pw");
        customer.open("/my/orders/" + order);
        customer.script("document.querySelector('input[name=version]').remove();");
        customer.type("address1", "1 Forged Street");
        customer.click("save-shipping");

        assertThat(customer.page()).isEqualTo("bad-request");
        assertThat(customer.status()).isEqualTo(400);
        assertThat(customer.text("problem-message"))
                .contains("did not carry the order version")
                .contains("Nothing was changed");
        customer.screenshot("bad-input-missing-version");
        assertThat(shop.row(order)).isEqualTo(before);
    }

    @Test
    void startShippingWithAVersionThatIsNotANumberIsRefused() {
        String order = shop.newOrder("bob");
        OrderRow before = shop.row(order);
        admin.signIn("admin", "admin-pw");
        admin.open("/admin/orders/" + order);
        admin.script("document.querySelector('input[name=version]').value = 'latest';");
        admin.click("start-shipping");

        assertThat(admin.page()).isEqualTo("bad-request");
        assertThat(admin.status()).isEqualTo(400);
        assertThat(admin.text("problem-message")).contains("'latest'").contains("not a version number");
        assertThat(shop.row(order)).isEqualTo(before);
    }

    @Test
    void startShippingWithoutVersionIsRefused() {
        String order = shop.newOrder("bob");
        OrderRow before = shop.row(order);
        admin.signIn("admin", "admin-pw");
        admin.open("/admin/orders/" + order);
        admin.script("document.querySelector('input[name=version]').remove();");
        admin.click("start-shipping");

        assertThat(admin.page()).isEqualTo("bad-request");
        assertThat(admin.status()).isEqualTo(400);
        assertThat(shop.row(order)).isEqualTo(before);
    }

    @Test
    void startShippingWithATamperedVersionGetsTheConflictPage() {
        String order = shop.newOrder("bob");
        OrderRow before = shop.row(order);
        admin.signIn("kim", "kim-pw");
        admin.open("/admin/orders/" + order);
        admin.script("document.querySelector('input[name=version]').value = '7';");
        admin.click("start-shipping");

        assertThat(admin.page()).isEqualTo("conflict");
        assertThat(admin.status()).isEqualTo(409);
        assertThat(admin.text("conflict-summary"))
                .contains("You saw version 7")
                .contains("now at version " + before.version());
        assertThat(shop.row(order)).isEqualTo(before);
    }

    @Test
    void shippingFormWithATamperedVersionGetsTheConflictPage() {
        String order = shop.newOrder("alice");
        OrderRow before = shop.row(order);
        customer.signIn("alice", "alice-pw");
        customer.open("/my/orders/" + order);
        customer.script("document.querySelector('input[name=version]').value = '-1';");
        customer.type("address1", "1 Forged Street");
        customer.click("save-shipping");

        assertThat(customer.page()).isEqualTo("bad-request");
        assertThat(customer.status()).isEqualTo(400);
        assertThat(shop.row(order)).isEqualTo(before);

        customer.open("/my/orders/" + order);
        customer.script("document.querySelector('input[name=version]').value = '3';");
        customer.type("address1", "1 Forged Street");
        customer.click("save-shipping");

        assertThat(customer.page()).isEqualTo("conflict");
        assertThat(customer.status()).isEqualTo(409);
        assertThat(shop.row(order)).isEqualTo(before);
    }

    @Test
    void customerCannotSeeAnotherCustomersOrder() {
        String alices = shop.newOrder("alice");
        customer.signIn("bob", "bob-pw");
        customer.open("/my/orders/" + alices);

        assertThat(customer.page()).isEqualTo("not-found");
        assertThat(customer.status()).isEqualTo(404);
        assertThat(customer.text("problem-message")).contains("no order " + alices + " that you can see");
        customer.screenshot("bad-input-other-customers-order");
    }

    @Test
    void customerCannotChangeAnotherCustomersOrder() {
        String alices = shop.newOrder("alice");
        String bobs = shop.newOrder("bob");
        OrderRow alicesBefore = shop.row(alices);
        OrderRow bobsBefore = shop.row(bobs);
        customer.signIn("bob", "bob-pw");
        customer.open("/my/orders/" + bobs);
        // Bob's own, valid form (version and CSRF token included), pointed at alice's order.
        customer.script("document.getElementById('shipping-form').action = '/my/orders/" + alices + "/shipping';");
        customer.type("address1", "1 Hijack Road");
        customer.click("save-shipping");

        assertThat(customer.page()).isEqualTo("not-found");
        assertThat(customer.status()).isEqualTo(404);
        assertThat(shop.row(alices)).isEqualTo(alicesBefore);
        assertThat(shop.row(bobs)).isEqualTo(bobsBefore);
    }

    @Test
    void formWithoutCsrfTokenIsRefused() {
        String order = shop.newOrder("alice");
        OrderRow before = shop.row(order);
        customer.signIn("alice", "alice-pw");
        customer.open("/my/orders/" + order);
        customer.script("document.querySelector('#shipping-form input[name=_csrf]').remove();");
        customer.type("address1", "1 Cross Site Street");
        customer.click("save-shipping");

        assertThat(customer.page()).isEqualTo("csrf");
        assertThat(customer.status()).isEqualTo(403);
        assertThat(customer.text("problem-message")).contains("security token").contains("Nothing was changed");
        customer.screenshot("bad-input-missing-csrf");
        assertThat(shop.row(order)).isEqualTo(before);
    }

    @Test
    void startShippingWithAWrongCsrfTokenIsRefused() {
        String order = shop.newOrder("bob");
        OrderRow before = shop.row(order);
        admin.signIn("kim", "kim-pw");
        admin.open("/admin/orders/" + order);
        admin.script("document.querySelector('#start-shipping-form input[name=_csrf]').value = 'forged';");
        admin.click("start-shipping");

        assertThat(admin.page()).isEqualTo("csrf");
        assertThat(admin.status()).isEqualTo(403);
        assertThat(shop.row(order)).isEqualTo(before);
    }

    @Test
    void customerCannotStartShipping() {
        String order = shop.newOrder("alice");
        OrderRow before = shop.row(order);
        customer.signIn("alice", "alice-pw");
        customer.open("/admin/orders/" + order);
        assertThat(customer.page()).isEqualTo("forbidden");
        assertThat(customer.status()).isEqualTo(403);

        // The admin's form, replayed by the customer with the customer's own CSRF token.
        customer.open("/my/orders/" + order);
        customer.script("const f = document.getElementById('shipping-form');" + "f.action = '/admin/orders/" + order
                + "/start-shipping';");
        customer.click("save-shipping");
        assertThat(customer.page()).isEqualTo("forbidden");
        assertThat(customer.status()).isEqualTo(403);
        assertThat(shop.row(order)).isEqualTo(before);
    }

    @Test
    void blankAddressIsShownAgainWithErrorsAndKeepsTheVersionSeen() {
        String order = shop.newOrder("alice");
        OrderRow before = shop.row(order);
        customer.signIn("alice", "alice-pw");
        customer.open("/my/orders/" + order);
        customer.type("address1", " ");
        customer.click("save-shipping");

        assertThat(customer.page()).isEqualTo("my-order");
        assertThat(customer.status()).isEqualTo(422);
        assertThat(customer.element("shipping-form").getText()).contains("Enter the street and number");
        assertThat(customer.element("version").getText()).isEqualTo(Long.toString(before.version()));
        assertThat(shop.row(order)).isEqualTo(before);
    }

    @Test
    void unknownOrderNumbersAndGarbageGetNotFound() {
        admin.signIn("admin", "admin-pw");
        admin.open("/admin/orders/NO-SUCH-ORDER");
        assertThat(admin.page()).isEqualTo("not-found");
        assertThat(admin.status()).isEqualTo(404);
        admin.open("/admin/orders/" + "x".repeat(2000));
        assertThat(admin.page()).isEqualTo("not-found");
        assertThat(admin.status()).isEqualTo(404);
    }
}
