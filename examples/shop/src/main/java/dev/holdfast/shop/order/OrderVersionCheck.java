package dev.holdfast.shop.order;

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
 * Both end in a {@link StaleOrderException} rendered as the conflict page.
 *
 * <p>Shop-local stand-in until Holdfast's {@code dev.holdfast.version} lands: then {@link #matchVersion}
 * delegates to its {@code matchVersion}, {@link StaleOrderException} becomes (or wraps) its
 * {@code VersionConflictException}, and nothing outside this class changes.
 */
public final class OrderVersionCheck {

    private OrderVersionCheck() {
    }

    /**
     * @param seenVersion the version the user's page showed
     * @throws StaleOrderException if the order has moved on since (or the version was tampered with)
     */
    public static void matchVersion(Order order, long seenVersion, String attempted) {
        if (order.getVersion() != seenVersion) {
            throw StaleOrderException.of(order, seenVersion, attempted);
        }
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
    public static final class StaleOrderException extends RuntimeException {

        private final String orderNumber;
        private final long seenVersion;
        private final long currentVersion;
        private final String modifiedBy;
        private final Instant modified;
        private final String lastChange;
        private final String attempted;

        private StaleOrderException(String orderNumber, long seenVersion, long currentVersion, String modifiedBy,
                                    Instant modified, String lastChange, String attempted) {
            super("Order " + orderNumber + " is at version " + currentVersion + ", the request carried version "
                    + seenVersion + "; last changed by " + modifiedBy + " at " + modified + ": " + lastChange);
            this.orderNumber = orderNumber;
            this.seenVersion = seenVersion;
            this.currentVersion = currentVersion;
            this.modifiedBy = modifiedBy;
            this.modified = modified;
            this.lastChange = lastChange;
            this.attempted = attempted;
        }

        static StaleOrderException of(Order current, long seenVersion, String attempted) {
            return new StaleOrderException(current.getOrderNumber(), seenVersion, current.getVersion(),
                    current.getModifiedBy(), current.getModified(), current.getLastChange(), attempted);
        }

        /** For a stale write found at flush: {@code current} is the order re-read after the failure. */
        public static StaleOrderException afterStaleWrite(Order current, String attempted) {
            return of(current, -1, attempted);
        }

        public String orderNumber() { return orderNumber; }
        /** The version the user saw, or -1 if only the write found out (the read was current). */
        public long seenVersion() { return seenVersion; }
        public long currentVersion() { return currentVersion; }
        public String modifiedBy() { return modifiedBy; }
        public Instant modified() { return modified; }
        public String lastChange() { return lastChange; }
        /** What the user tried to do, in words: nothing of it was saved. */
        public String attempted() { return attempted; }
    }
}
