package dev.holdfast.shop.invoice;

import dev.holdfast.shop.order.ShippingInfo;
import jakarta.persistence.Column;
import jakarta.persistence.Embedded;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import java.time.Instant;

/** An issued invoice: to the address the admin saw when preparing it, never to one changed since. */
@Entity
@Table(name = "invoice")
public class Invoice {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    private Long id;

    @Column(name = "order_number", length = 32, nullable = false)
    private String orderNumber;

    /** Receiver and address as the order had them (each page joins them in the viewer's language). */
    @Embedded
    private ShippingInfo billTo;

    @Column(name = "amount_cents", nullable = false)
    private long amountCents;

    @Column(name = "order_version", nullable = false)
    private long orderVersion;

    @Column(name = "issued_by", length = 64, nullable = false)
    private String issuedBy;

    @Column(name = "issued", nullable = false)
    private Instant issued;

    protected Invoice() {
        // for JPA
    }

    Invoice(
            String orderNumber,
            ShippingInfo billTo,
            long amountCents,
            long orderVersion,
            String issuedBy,
            Instant issued) {
        this.orderNumber = orderNumber;
        this.billTo = billTo;
        this.amountCents = amountCents;
        this.orderVersion = orderVersion;
        this.issuedBy = issuedBy;
        this.issued = issued;
    }

    public Long getId() {
        return id;
    }

    public String getOrderNumber() {
        return orderNumber;
    }

    public ShippingInfo getBillTo() {
        return billTo;
    }

    public long getAmountCents() {
        return amountCents;
    }

    public long getOrderVersion() {
        return orderVersion;
    }

    public String getIssuedBy() {
        return issuedBy;
    }

    public Instant getIssued() {
        return issued;
    }
}
