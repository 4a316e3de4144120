package dev.holdfast.hibernate;

import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.ManyToOne;
import jakarta.persistence.Table;

/** Test aggregate member with an IDENTITY id: Hibernate inserts it at persist, outside a flush. */
@Entity
@Table(name = "hf_note")
public class OrderNote implements AggregateMember {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    Long id;

    @ManyToOne(optional = false)
    PurchaseOrder order;

    String text;

    protected OrderNote() {}

    OrderNote(PurchaseOrder order, String text) {
        this.order = order;
        this.text = text;
    }

    @Override
    public Object aggregateRoot() {
        return order;
    }
}
