package dev.holdfast.shop.order;

import jakarta.persistence.Column;
import jakarta.persistence.Embeddable;

/** A postal address; a value. */
@Embeddable
public record Address(
        @Column(name = "zip_code", length = 16, nullable = false) String zipCode,
        @Column(name = "address1", length = 200, nullable = false) String address1,
        @Column(name = "address2", length = 200) String address2) {

    /** One line for lists and conflict pages. */
    public String oneLine() {
        return address1 + (address2 == null || address2.isBlank() ? "" : ", " + address2) + " (" + zipCode + ")";
    }
}
