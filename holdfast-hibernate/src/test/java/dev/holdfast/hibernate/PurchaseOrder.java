package dev.holdfast.hibernate;

import jakarta.persistence.CascadeType;
import jakarta.persistence.CollectionTable;
import jakarta.persistence.ElementCollection;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.JoinColumn;
import jakarta.persistence.OneToMany;
import jakarta.persistence.OrderBy;
import jakarta.persistence.Table;
import jakarta.persistence.Version;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** Test aggregate root: an order with lines (mappedBy) and tags (an owned element collection). */
@Entity
@Table(name = "hf_order")
public class PurchaseOrder {

    @Id
    Long id;

    @Version
    long version;

    String state;

    @OneToMany(mappedBy = "order", cascade = CascadeType.ALL, orphanRemoval = true)
    @OrderBy("id")
    List<OrderLine> lines = new ArrayList<>();

    @ElementCollection
    @CollectionTable(name = "hf_order_tag", joinColumns = @JoinColumn(name = "order_id"))
    Set<String> tags = new LinkedHashSet<>();

    protected PurchaseOrder() {}

    PurchaseOrder(long id, String state) {
        this.id = id;
        this.state = state;
    }

    OrderLine addLine(long lineId, int quantity) {
        OrderLine line = new OrderLine(lineId, this, quantity);
        lines.add(line);
        return line;
    }
}
