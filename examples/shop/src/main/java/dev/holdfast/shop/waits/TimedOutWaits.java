package dev.holdfast.shop.waits;

import dev.holdfast.Holder;
import dev.holdfast.lease.LeaseTimeoutException;
import dev.holdfast.pessimistic.Blockers;
import dev.holdfast.pessimistic.LockTimeoutException;
import org.springframework.stereotype.Component;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;

/**
 * The last lock waits of this shop instance that ran out, each with who blocked it: the sessions that
 * held an order's row ({@link LockTimeoutException#blockers()}) or the holder of a lease and the waiters
 * ahead ({@link LeaseTimeoutException}). The admin locks page lists them, so an operator sees who blocks
 * whom. In memory, the newest {@value #KEPT} only: a page, not an audit log (the logs have every one).
 */
@Component
public class TimedOutWaits {

    /** How many are kept. */
    public static final int KEPT = 20;

    /**
     * One wait that ran out.
     *
     * @param at             when it gave up (this server's clock)
     * @param waiter         who waited: the signed-in user (an admin's "Run now" too), or the shop instance for its schedule
     * @param instance       for a lease: the shop instance that asked for it; else null
     * @param kind           {@code row} (an order's row lock) or {@code lease}
     * @param what           the order number or the lease name
     * @param blockers       for a row lock: who held it, or why that is unknown; else null
     * @param holder         for a lease: who held it when the caller gave up; null if free then, or unknown
     * @param waitersAhead   for a lease: how many waited ahead of the caller; null if unknown or a row lock
     * @param unknownBecause for a lease: why the holder is unknown; else null
     */
    public record Entry(
            Instant at,
            String waiter,
            String instance,
            String kind,
            String what,
            Blockers blockers,
            Holder holder,
            Integer waitersAhead,
            String unknownBecause) {

        public boolean rowLock() {
            return "row".equals(kind);
        }

        /** True if a user asked for the lease on {@link #instance} (an admin's "Run now"), not the instance itself. */
        public boolean onBehalfOfUser() {
            return instance != null && !instance.equals(waiter);
        }

        /** True if the lease was held by the very instance that asked: another run of it, not a deadlock on itself. */
        public boolean heldByOwnInstance() {
            return holder != null && instance != null && instance.equals(holder.owner());
        }
    }

    private final Deque<Entry> entries = new ArrayDeque<>();
    private final Clock clock;

    public TimedOutWaits(Clock clock) {
        this.clock = clock;
    }

    /** A row lock of order {@code orderNumber} that {@code waiter} waited for in vain. */
    public void rowLock(String waiter, String orderNumber, LockTimeoutException e) {
        add(new Entry(clock.instant(), waiter, null, "row", orderNumber, e.blockers(), null, null, null));
    }

    /** A lease that {@code waiter} asked for on shop instance {@code instance} and was not granted in time. */
    public void lease(String waiter, String instance, LeaseTimeoutException e) {
        add(new Entry(
                clock.instant(),
                waiter,
                instance,
                "lease",
                e.leaseName(),
                null,
                e.holder().orElse(null),
                e.waitersAhead().isPresent() ? e.waitersAhead().getAsInt() : null,
                e.holderUnknownBecause().orElse(null)));
    }

    /** Newest first. */
    public synchronized List<Entry> recent() {
        return List.copyOf(entries);
    }

    private synchronized void add(Entry entry) {
        entries.addFirst(entry);
        while (entries.size() > KEPT) {
            entries.removeLast();
        }
    }
}
