package dev.holdfast.shop.order;

import dev.holdfast.optimistic.VersionStamp;
import dev.holdfast.shop.schema.ShopTableNames;
import jakarta.persistence.CollectionTable;
import jakarta.persistence.Column;
import jakarta.persistence.ElementCollection;
import jakarta.persistence.Embedded;
import jakarta.persistence.Entity;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
import jakarta.persistence.FetchType;
import jakarta.persistence.Id;
import jakarta.persistence.JoinColumn;
import jakarta.persistence.OrderColumn;
import jakarta.persistence.PostLoad;
import jakarta.persistence.PostPersist;
import jakarta.persistence.Table;
import jakarta.persistence.Transient;
import jakarta.persistence.Version;
import org.springframework.data.domain.Persistable;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The order aggregate: its root carries the version that guards the whole aggregate (lines and
 * shipping info are values inside it), and who changed it last, when, and how, so a conflict page
 * can tell the second writer what happened.
 */
@Entity
@Table(name = ShopTableNames.ORDERS)
public class Order implements Persistable<String> {

    /** Key column, used for pessimistic row locks. */
    public static final String KEY_COLUMN = "order_number";

    @Id
    @Column(name = KEY_COLUMN, length = 32)
    private String orderNumber;

    @Column(name = "orderer", length = 64, nullable = false)
    private String orderer;

    @ElementCollection(fetch = FetchType.EAGER)
    @CollectionTable(name = ShopTableNames.ORDER_LINES, joinColumns = @JoinColumn(name = KEY_COLUMN))
    @OrderColumn(name = "line_no")
    private List<OrderLine> lines = new ArrayList<>();

    @Embedded
    private ShippingInfo shippingInfo;

    @Enumerated(EnumType.STRING)
    @Column(name = "state", length = 24, nullable = false)
    private OrderState state;

    @Version
    @Column(name = "version", nullable = false)
    private long version;

    @Column(name = "modified_by", length = 64, nullable = false)
    private String modifiedBy;

    @Column(name = "modified", nullable = false)
    private Instant modified;

    @Column(name = "last_change", length = 400, nullable = false)
    private String lastChange;

    /** New orders are persisted, not merged: a merge would bump the version of a brand-new order. */
    @Transient
    private boolean isNew = true;

    protected Order() {
        // for JPA
    }

    public Order(
            String orderNumber,
            String orderer,
            List<OrderLine> lines,
            ShippingInfo shippingInfo,
            OrderState state,
            Instant placed) {
        this.orderNumber = Objects.requireNonNull(orderNumber, "orderNumber");
        this.orderer = Objects.requireNonNull(orderer, "orderer");
        if (lines == null || lines.isEmpty()) {
            throw new IllegalArgumentException("an order needs at least one line");
        }
        this.lines = new ArrayList<>(lines);
        this.shippingInfo = Objects.requireNonNull(shippingInfo, "shippingInfo");
        this.state = Objects.requireNonNull(state, "state");
        record(orderer, placed, ChangeText.of("change.placed"));
    }

    /**
     * Replaces the shipping info.
     *
     * @throws OrderStateException if shipping has already started
     */
    public void changeShippingInfo(ShippingInfo newShippingInfo, String by, Instant at) {
        if (!state.isShippingChangeable()) {
            throw new OrderStateException(orderNumber, state, "change the shipping address");
        }
        this.shippingInfo = Objects.requireNonNull(newShippingInfo, "newShippingInfo");
        record(by, at, ChangeText.of("change.address", newShippingInfo));
    }

    /**
     * Hands the order to the carrier, to the address currently on the order.
     *
     * @throws OrderStateException unless the order is being prepared
     */
    public void startShipping(String by, Instant at) {
        if (state != OrderState.PREPARING) {
            throw new OrderStateException(orderNumber, state, "start shipping");
        }
        this.state = OrderState.SHIPPED;
        record(by, at, ChangeText.of("change.shipping", shippingInfo));
    }

    /**
     * An admin corrects who receives the parcel and how many of each line are sent (the edit page of
     * scenario 3, done under an offline lock).
     *
     * @param quantities one per order line, in line order, each 1 to 99
     * @throws OrderStateException      if shipping has already started
     * @throws IllegalArgumentException if the quantities do not fit the lines
     */
    public void editByAdmin(Receiver newReceiver, List<Integer> quantities, String by, Instant at) {
        if (!state.isShippingChangeable()) {
            throw new OrderStateException(orderNumber, state, "edit the order");
        }
        if (quantities == null
                || quantities.size() != lines.size()
                || quantities.stream().anyMatch(q -> q == null || q < 1 || q > 99)) {
            throw new IllegalArgumentException("one quantity of 1 to 99 per order line is needed");
        }
        List<OrderLine> newLines = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            OrderLine line = lines.get(i);
            newLines.add(new OrderLine(line.productName(), line.priceCents(), quantities.get(i)));
        }
        this.lines = newLines;
        this.shippingInfo =
                new ShippingInfo(Objects.requireNonNull(newReceiver, "newReceiver"), shippingInfo.address());
        record(
                by,
                at,
                ChangeText.of("change.edited", newReceiver.name(), newReceiver.phone(), ChangeText.lines(newLines)));
    }

    private void record(String by, Instant at, String change) {
        this.modifiedBy = Objects.requireNonNull(by, "by");
        this.modified = Objects.requireNonNull(at, "at");
        this.lastChange = change;
    }

    @PostLoad
    @PostPersist
    void markNotNew() {
        this.isNew = false;
    }

    @Override
    public String getId() {
        return orderNumber;
    }

    @Override
    public boolean isNew() {
        return isNew;
    }

    public String getOrderNumber() {
        return orderNumber;
    }

    public String getOrderer() {
        return orderer;
    }

    public List<OrderLine> getLines() {
        return List.copyOf(lines);
    }

    public ShippingInfo getShippingInfo() {
        return shippingInfo;
    }

    public OrderState getState() {
        return state;
    }

    public long getVersion() {
        return version;
    }

    public String getModifiedBy() {
        return modifiedBy;
    }

    public Instant getModified() {
        return modified;
    }

    public String getLastChange() {
        return lastChange;
    }

    /** The optimistic-lock columns as loaded: version, who changed the order last and when. */
    public VersionStamp stamp() {
        return new VersionStamp(version, modifiedBy, modified);
    }

    public long getTotalCents() {
        return lines.stream().mapToLong(OrderLine::amountCents).sum();
    }

    public boolean isShippingChangeable() {
        return state.isShippingChangeable();
    }
}
