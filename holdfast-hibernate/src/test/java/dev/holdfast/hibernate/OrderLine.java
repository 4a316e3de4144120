package dev.holdfast.hibernate;

import jakarta.persistence.CollectionTable;
import jakarta.persistence.ElementCollection;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.JoinColumn;
import jakarta.persistence.ManyToOne;
import jakarta.persistence.Table;

import java.util.ArrayList;
import java.util.List;

/** Test aggregate member: has no version of its own, and an element collection of notes (the README's example). */
// tag::aggregate-member[]
@Entity
@Table(name = "hf_line")
public class OrderLine implements AggregateMember {   // a member of the PurchaseOrder aggregate

    @Id
    Long id;

    @ManyToOne(optional = false)
    PurchaseOrder order;                               // the root, which has @Version

    @Override
    public Object aggregateRoot() {
        return order;                                  // a change to this line bumps the order's version
    }

    // quantity, notes, constructors ...
    // end::aggregate-member[]

    int quantity;

    @ElementCollection
    @CollectionTable(name = "hf_line_note", joinColumns = @JoinColumn(name = "line_id"))
    List<String> notes = new ArrayList<>();

    protected OrderLine() {}

    OrderLine(long id, PurchaseOrder order, int quantity) {
        this.id = id;
        this.order = order;
        this.quantity = quantity;
    }
}
