package dev.holdfast.shop.order;

/**
 * No such order, or not one the current user may see: both look the same from outside, so a
 * customer cannot probe other customers' order numbers.
 */
public class OrderNotFoundException extends RuntimeException {

    private final String orderNumber;

    public OrderNotFoundException(String orderNumber) {
        super("No order " + orderNumber + " for you");
        this.orderNumber = orderNumber;
    }

    public String orderNumber() {
        return orderNumber;
    }
}
