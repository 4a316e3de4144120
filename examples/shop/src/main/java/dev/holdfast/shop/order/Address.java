package dev.holdfast.shop.order;

import jakarta.persistence.Column;
import jakarta.persistence.Embeddable;

/** A postal address; a value. */
@Embeddable
public record Address(
        @Column(name = "zip_code", length = 16, nullable = false)
        String zipCode,

        @Column(name = "address1", length = 200, nullable = false)
        String address1,

        @Column(name = "address2", length = 200) String address2) {}
