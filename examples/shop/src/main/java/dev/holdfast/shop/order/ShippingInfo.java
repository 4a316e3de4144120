package dev.holdfast.shop.order;

import jakarta.persistence.Embeddable;
import jakarta.persistence.Embedded;

/** Where the order goes and who receives it; a value, replaced as a whole. */
@Embeddable
public record ShippingInfo(
        @Embedded Receiver receiver, @Embedded Address address) {}
