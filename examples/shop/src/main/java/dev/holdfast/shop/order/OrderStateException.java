package dev.holdfast.shop.order;

/** The order's state does not allow the action (e.g. changing the address of a shipped order). */
public class OrderStateException extends RuntimeException {

    private final String orderNumber;
    private final OrderState state;
    private final String action;

    OrderStateException(String orderNumber, OrderState state, String action) {
        super("Cannot " + action + " of order " + orderNumber + ": it is "
                + state.label().toLowerCase());
        this.orderNumber = orderNumber;
        this.state = state;
        this.action = action;
    }

    public String orderNumber() {
        return orderNumber;
    }

    public OrderState state() {
        return state;
    }
    /** What was refused, in English words (message code {@code action.} + the words joined with '-'). */
    public String action() {
        return action;
    }
}
