package dev.holdfast.shop.order;

import jakarta.persistence.Column;
import jakarta.persistence.Embeddable;

/** Who takes the parcel at the door; a value. */
@Embeddable
public record Receiver(
        @Column(name = "receiver_name", length = 100, nullable = false)
        String name,

        @Column(name = "receiver_phone", length = 40, nullable = false)
        String phone) {}
