package dev.holdfast.shop.order;

/** Where an order is in its life. The shipping address can change only before shipping starts. */
public enum OrderState {
    PAYMENT_WAITING("Waiting for payment"),
    PREPARING("Preparing"),
    SHIPPED("Shipping started"),
    DELIVERING("Delivering"),
    DELIVERY_COMPLETED("Delivered"),
    CANCELED("Canceled");

    private final String label;

    OrderState(String label) {
        this.label = label;
    }

    /** English name for logs and messages; pages use the message bundle ({@code state.*}). */
    public String label() {
        return label;
    }

    boolean isShippingChangeable() {
        return this == PAYMENT_WAITING || this == PREPARING;
    }
}
