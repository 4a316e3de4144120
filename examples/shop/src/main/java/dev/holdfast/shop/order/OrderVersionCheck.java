package dev.holdfast.shop.order;

import dev.holdfast.optimistic.StaleRow;
import dev.holdfast.optimistic.VersionConflictException;
import org.springframework.orm.ObjectOptimisticLockingFailureException;

import java.time.Instant;

/**
 * The one place where the shop decides that a client's copy of an order is stale. Two ways lead here:
 * <ol>
 *   <li>{@link #matchVersion}: the version the user saw travels in the form and is compared with the
 *       order's version inside the transaction (before any change);</li>
 *   <li>{@link #isStaleWrite}: JPA's {@code @Version} predicate failed at flush, i.e. another
 *       transaction committed between our read and our write.</li>
 * </ol>
 * Both end in a {@link StaleOrderException} rendered as the conflict page. The check is Holdfast's
 * {@link VersionConflictException#requireVersion}; {@link StaleOrderException} is its {@link VersionConflictException}
 * plus what the shop's page says besides (the order's last change in words, what the user attempted),
 * so holdfast-spring-boot-starter translates it to Spring's {@code OptimisticLockingFailureException} and counts it.
 */
public final class OrderVersionCheck {

    /** The entity name in conflict messages: "order ORD-1 was modified by kim at …". */
    public static final String ENTITY = "order";

    private OrderVersionCheck() {}

    /**
     * @param seenVersion the version the user's page showed
     * @throws StaleOrderException if the order has moved on since (or the version was tampered with)
     */
    public static void matchVersion(Order order, long seenVersion, String attempted) {
        try {
            VersionConflictException.requireVersion(order.stamp(), ENTITY, order.getOrderNumber(), seenVersion);
        } catch (VersionConflictException e) {
            throw new StaleOrderException(e.staleRows().get(0), order.getLastChange(), attempted);
        }
    }

    /**
     * A read-set check found the order changed ({@code e} from {@code VersionedTable.verifyUnchanged}):
     * the same conflict, with the order's last change in words for the page.
     */
    public static StaleOrderException staleRead(VersionConflictException e, Order current, String attempted) {
        return new StaleOrderException(e.staleRows().get(0), current.getLastChange(), attempted);
    }

    /** True if {@code e} is JPA's stale-write failure for an order. */
    public static boolean isStaleWrite(Throwable e) {
        return e instanceof ObjectOptimisticLockingFailureException o
                && Order.class.getName().equals(o.getPersistentClassName());
    }

    /** The order key of a stale write, as JPA reported it. */
    public static String orderNumberOf(ObjectOptimisticLockingFailureException e) {
        return String.valueOf(e.getIdentifier());
    }

    /** The order changed after the user saw it; nothing was written. */
    public static final class StaleOrderException extends VersionConflictException {

        private final String lastChange;
        private final String attempted;

        StaleOrderException(StaleRow row, String lastChange, String attempted) {
            super(row);
            this.lastChange = lastChange;
            this.attempted = attempted;
        }

        /**
         * For a stale write found at flush: {@code current} is the order re-read after the failure,
         * {@code seenVersion} the version the user's form carried.
         */
        public static StaleOrderException afterStaleWrite(Order current, long seenVersion, String attempted) {
            return new StaleOrderException(
                    StaleRow.changed(ENTITY, current.getOrderNumber(), seenVersion, current.stamp()),
                    current.getLastChange(),
                    attempted);
        }

        public String orderNumber() {
            return String.valueOf(id());
        }
        /** The version the user saw. */
        public long seenVersion() {
            return expectedVersion();
        }

        public long getCurrentVersion() {
            return currentVersion().orElseThrow();
        }

        public String getModifiedBy() {
            return modifiedBy().orElse(null);
        }

        public Instant getModified() {
            return modified().orElse(null);
        }

        public String lastChange() {
            return lastChange;
        }
        /** What the user tried to do, in words: nothing of it was saved. */
        public String attempted() {
            return attempted;
        }
    }
}
