package dev.holdfast.shop.browser;

import dev.holdfast.shop.browser.ShopServer.OrderRow;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No typed work is lost: a refused save shows what the user changed beside the order as it is now,
 * and one click re-applies exactly those changes on top of it, overwriting nobody else's.
 */
class TypedWorkBrowserTest extends TwoBrowsers {

    @Test
    void aCustomerWhoseSaveLostToAnAdminsEditReappliesTheirChangeWithOneClickAndKeepsTheAdmins() {
        String order = shop.newOrder("alice");
        customer.signIn("alice", "alice-pw");
        admin.signIn("kim", "kim-pw");
        customer.open("/my/orders/" + order);

        admin.open("/admin/orders/" + order + "/edit");
        admin.type("receiverName", "Kim's Receiver");
        admin.click("save-edit");
        assertThat(admin.text("notice")).contains("was saved");

        customer.type("address1", "12 Typed Street");
        customer.type("zipCode", "11111");
        customer.click("save-shipping");

        assertThat(customer.page()).isEqualTo("conflict");
        assertThat(customer.status()).isEqualTo(409);
        assertThat(customer.text("typed-address1")).isEqualTo("12 Typed Street");
        assertThat(customer.text("typed-zipCode")).isEqualTo("11111");
        assertThat(customer.all("#typed-receiverName"))
                .as("alice did not change the receiver")
                .isEmpty();
        assertThat(customer.text("conflict-change")).contains("kim");
        customer.screenshot("scenario4-conflict-keeps-typed");
        OrderRow refused = shop.row(order);
        assertThat(refused.address1()).isEqualTo("1 Original Road");
        assertThat(refused.receiverName()).isEqualTo("Kim's Receiver");

        customer.click("reapply");

        assertThat(customer.page()).isEqualTo("my-order");
        assertThat(customer.text("notice")).contains("was changed");
        OrderRow row = shop.row(order);
        assertThat(row.address1()).isEqualTo("12 Typed Street");
        assertThat(row.zipCode()).isEqualTo("11111");
        assertThat(row.receiverName()).as("kim's change in between is kept").isEqualTo("Kim's Receiver");
        assertThat(row.version()).isEqualTo(refused.version() + 1);
        assertThat(row.modifiedBy()).isEqualTo("alice");
    }

    @Test
    void aRefusedFormWithNothingChangedOffersNothingToReapply() {
        String order = shop.newOrder("alice");
        customer.signIn("alice", "alice-pw");
        admin.signIn("kim", "kim-pw");
        customer.open("/my/orders/" + order);
        admin.open("/admin/orders/" + order + "/edit");
        admin.type("receiverName", "Someone Else");
        admin.click("save-edit");

        customer.click("save-shipping"); // saved unchanged: only the version is stale

        assertThat(customer.page()).isEqualTo("conflict");
        assertThat(customer.all("#your-changes")).isEmpty();
        assertThat(shop.row(order).receiverName()).isEqualTo("Someone Else");
    }
}
