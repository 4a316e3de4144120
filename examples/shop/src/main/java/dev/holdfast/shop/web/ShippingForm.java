package dev.holdfast.shop.web;

import dev.holdfast.shop.order.Address;
import dev.holdfast.shop.order.Order;
import dev.holdfast.shop.order.Receiver;
import dev.holdfast.shop.order.ShippingInfo;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;

/** The "change shipping address" form; {@code version} is the hidden field with the version the page showed. */
public class ShippingForm {

    @NotBlank(message = "{form.receiver.required}")
    @Size(max = 100, message = "{form.max}")
    private String receiverName;

    @NotBlank(message = "{form.phone.required}")
    @Pattern(regexp = "[+0-9 ()-]{3,40}", message = "{form.phone.pattern}")
    private String receiverPhone;

    @NotBlank(message = "{form.zip.required}")
    @Size(max = 16, message = "{form.max}")
    private String zipCode;

    @NotBlank(message = "{form.address1.required}")
    @Size(max = 200, message = "{form.max}")
    private String address1;

    @Size(max = 200, message = "{form.max}")
    private String address2;

    private String version;

    static ShippingForm of(Order order) {
        ShippingForm form = new ShippingForm();
        ShippingInfo info = order.getShippingInfo();
        form.receiverName = info.receiver().name();
        form.receiverPhone = info.receiver().phone();
        form.zipCode = info.address().zipCode();
        form.address1 = info.address().address1();
        form.address2 = info.address().address2();
        form.version = Long.toString(order.getVersion());
        return form;
    }

    ShippingInfo toShippingInfo() {
        String line2 = address2 == null || address2.isBlank() ? null : address2.trim();
        return new ShippingInfo(
                new Receiver(receiverName.trim(), receiverPhone.trim()),
                new Address(zipCode.trim(), address1.trim(), line2));
    }

    public String getReceiverName() {
        return receiverName;
    }

    public void setReceiverName(String receiverName) {
        this.receiverName = receiverName;
    }

    public String getReceiverPhone() {
        return receiverPhone;
    }

    public void setReceiverPhone(String receiverPhone) {
        this.receiverPhone = receiverPhone;
    }

    public String getZipCode() {
        return zipCode;
    }

    public void setZipCode(String zipCode) {
        this.zipCode = zipCode;
    }

    public String getAddress1() {
        return address1;
    }

    public void setAddress1(String address1) {
        this.address1 = address1;
    }

    public String getAddress2() {
        return address2;
    }

    public void setAddress2(String address2) {
        this.address2 = address2;
    }

    public String getVersion() {
        return version;
    }

    public void setVersion(String version) {
        this.version = version;
    }
}
