package dev.holdfast.shop.order;

import dev.holdfast.pessimistic.LockWait;
import dev.holdfast.pessimistic.RowRef;
import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.pessimistic.offline.LockManager;
import dev.holdfast.pessimistic.offline.Reacquired;
import dev.holdfast.shop.schema.ShopTableNames;
import dev.holdfast.spring.boot.TransactionalRowLocks;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

import java.time.Clock;
import java.time.Duration;
import java.util.List;

/**
 * Application service of the order aggregate. Every change follows the same steps in one
 * transaction: lock the order row (bounded wait), load it, compare the version the user saw, change.
 */
@Service
public class OrderService {

    /** How long a change waits for another transaction holding the same order. */
    public static final Duration LOCK_WAIT = Duration.ofSeconds(3);

    /** The type of the offline lock an admin takes to edit an order (scenario 3). */
    public static final String EDIT_LOCK_TYPE = "purchase_order";

    private final OrderRepository orders;
    private final TransactionalRowLocks rowLocks;
    private final ShopTableNames tables;
    private final Clock clock;
    private final LockManager editLocks;

    /**
     * {@code rowLocks} and {@code editLocks} come from holdfast-spring-boot-starter's auto-configuration (dialect
     * detected from the DataSource; row locks on the running transaction's connection; offline locks in
     * {@code holdfast_locks}, bound to their owner).
     */
    public OrderService(
            OrderRepository orders,
            TransactionalRowLocks rowLocks,
            ShopTableNames tables,
            Clock clock,
            LockManager editLocks) {
        this.orders = orders;
        this.rowLocks = rowLocks;
        this.tables = tables;
        this.clock = clock;
        this.editLocks = editLocks;
    }

    /**
     * An admin opens the edit page of an order: takes the offline lock for them. An admin who holds
     * it already (a reloaded page, a second tab) gets it again with a fresh id: the earlier page can
     * no longer save.
     *
     * @throws OrderNotFoundException                     no such order (no lock is taken)
     * @throws dev.holdfast.spring.boot.OfflineLockHeldException another admin edits it (the cause says who)
     */
    public Reacquired startEditing(String admin, String orderNumber) {
        anyOrder(orderNumber);
        // tag::start-editing[]
        return editLocks.reacquire(EDIT_LOCK_TYPE, orderNumber, admin);
        // end::start-editing[]
    }

    /**
     * An admin saves the edit page. The offline lock must still be the live lock of this admin on this
     * order (checked before anything is read or changed); the version the page showed must still be the
     * order's, since customers do not take the admin's lock. The lock is released by the caller once
     * this transaction has committed ({@link #stopEditing}).
     *
     * @throws dev.holdfast.spring.boot.OfflineLockLostException the lock expired, was broken or released, is another
     *                                                     admin's or another order's, or was never issued
     * @throws OrderVersionCheck.StaleOrderException      the order changed since the page was opened
     * @throws OrderStateException                        shipping has started
     */
    @Transactional
    public Order edit(
            String admin,
            String orderNumber,
            LockId lockId,
            long seenVersion,
            Receiver receiver,
            List<Integer> quantities) {
        // tag::edit-with-lock[]
        editLocks.checkLock(lockId, EDIT_LOCK_TYPE, orderNumber, admin);
        lockOrder(orderNumber);
        Order order = anyOrder(orderNumber);
        OrderVersionCheck.matchVersion(order, seenVersion, ChangeText.of("attempt.edit"));
        order.editByAdmin(receiver, quantities, admin, clock.instant());
        // end::edit-with-lock[]
        return order;
    }

    /**
     * Releases the admin's edit lock (after saving, or on cancel).
     *
     * @throws dev.holdfast.spring.boot.OfflineLockLostException if it authorizes nothing any more (expired, broken, another's)
     */
    public void stopEditing(String admin, LockId lockId) {
        editLocks.releaseLock(lockId, admin);
    }

    /** The customer's own orders. */
    @Transactional(readOnly = true)
    public List<Order> ordersOf(String customer) {
        return orders.findByOrdererOrderByOrderNumber(customer);
    }

    /** Every order, for admins. */
    @Transactional(readOnly = true)
    public List<Order> allOrders() {
        return orders.findAllByOrderByOrderNumber();
    }

    /** @throws OrderNotFoundException if there is no such order or it is not {@code customer}'s */
    @Transactional(readOnly = true)
    public Order ownOrder(String customer, String orderNumber) {
        return orders.findById(orderNumber)
                .filter(o -> o.getOrderer().equals(customer))
                .orElseThrow(() -> new OrderNotFoundException(orderNumber));
    }

    /** @throws OrderNotFoundException if there is no such order */
    @Transactional(readOnly = true)
    public Order anyOrder(String orderNumber) {
        return orders.findById(orderNumber).orElseThrow(() -> new OrderNotFoundException(orderNumber));
    }

    /**
     * A customer changes the shipping info of one of their orders.
     *
     * @throws OrderNotFoundException                       not the customer's order (nothing revealed)
     * @throws OrderVersionCheck.StaleOrderException        the order changed since the customer saw {@code seenVersion}
     * @throws OrderStateException                          shipping has started
     * @throws dev.holdfast.spring.boot.RowLockTimeoutException another transaction held the order for {@link #LOCK_WAIT}
     */
    @Transactional
    public Order changeShippingInfo(String customer, String orderNumber, long seenVersion, ShippingInfo newInfo) {
        lockOrder(orderNumber);
        Order order = ownOrder(customer, orderNumber);
        OrderVersionCheck.matchVersion(order, seenVersion, ChangeText.of("attempt.change-address-any"));
        order.changeShippingInfo(newInfo, customer, clock.instant());
        return order;
    }

    /**
     * An admin starts shipping, to the address shown on their page: the version they saw must still be
     * the order's version, so a shipping address changed in between is never shipped to unseen.
     *
     * @throws OrderNotFoundException                       no such order
     * @throws OrderVersionCheck.StaleOrderException        the order changed since the admin saw {@code seenVersion}
     * @throws OrderStateException                          the order is not being prepared
     * @throws dev.holdfast.spring.boot.RowLockTimeoutException another transaction held the order for {@link #LOCK_WAIT}
     */
    @Transactional
    public Order startShipping(String admin, String orderNumber, long seenVersion) {
        // tag::start-shipping[]
        lockOrder(orderNumber);
        Order order = anyOrder(orderNumber);
        OrderVersionCheck.matchVersion(order, seenVersion, ChangeText.of("attempt.start-shipping"));
        order.startShipping(admin, clock.instant());
        // end::start-shipping[]
        return order;
    }

    /**
     * Locks the order's row on the connection of the current JPA transaction, so the lock lasts until
     * this transaction ends and the entity read after it is current.
     */
    private void lockOrder(String orderNumber) {
        // tag::lock-order[]
        rowLocks.forUpdate(RowRef.of(tables.orders(), Order.KEY_COLUMN, orderNumber), LockWait.atMost(LOCK_WAIT));
        // A missing row needs no lock: the load that follows reports it.
        // end::lock-order[]
    }
}
