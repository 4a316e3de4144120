package dev.holdfast.shop.browser;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The ordinary pages, as each role sees them (their screenshots illustrate docs/guide.md). */
class PagesBrowserTest extends TwoBrowsers {

    @Test
    void loginPageListsTheDemoAccountsAndRefusesAWrongPassword() {
        customer.signOut();
        customer.open("/login");
        assertThat(customer.text("demo-users"))
                .contains("alice")
                .contains("alice-pw")
                .contains("kim-pw")
                .contains("admin");
        customer.screenshot("page-login");

        customer.type("username", "alice");
        customer.type("password", "wrong");
        customer.click("sign-in");
        assertThat(customer.text("login-error")).contains("Wrong user name or password");
    }

    @Test
    void customerSeesOnlyOwnOrdersAndAdminSeesAll() {
        String alices = shop.newOrder("alice");
        String bobs = shop.newOrder("bob");
        customer.signIn("alice", "alice-pw");
        admin.signIn("admin", "admin-pw");

        customer.open("/my/orders");
        assertThat(customer.text("orders"))
                .contains(alices)
                .contains("ORD-1001")
                .doesNotContain(bobs)
                .doesNotContain("ORD-2001");
        customer.screenshot("page-my-orders");
        customer.open("/my/orders/ORD-1001");
        assertThat(customer.element("shipping-form").isDisplayed()).isTrue();
        customer.screenshot("page-change-shipping");

        admin.open("/admin/orders");
        assertThat(admin.text("orders"))
                .contains(alices)
                .contains(bobs)
                .contains("ORD-1001")
                .contains("ORD-2001");
        admin.screenshot("page-all-orders");
        admin.open("/admin/orders/ORD-2001");
        assertThat(admin.element("start-shipping").getText()).isEqualTo("Start shipping to this address");
        admin.screenshot("page-admin-order");
    }
}
