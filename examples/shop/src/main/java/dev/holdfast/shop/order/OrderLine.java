package dev.holdfast.shop.order;

import jakarta.persistence.Column;
import jakarta.persistence.Embeddable;

/** One product of an order; a value inside the aggregate. Prices are in cents. */
@Embeddable
public record OrderLine(
        @Column(name = "product_name", length = 200, nullable = false)
        String productName,

        @Column(name = "price_cents", nullable = false) long priceCents,
        @Column(name = "quantity", nullable = false) int quantity) {

    public long amountCents() {
        return priceCents * quantity;
    }
}
