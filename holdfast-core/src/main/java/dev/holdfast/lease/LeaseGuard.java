package dev.holdfast.lease;

import dev.holdfast.DatabaseException;
import dev.holdfast.internal.Arguments;
import dev.holdfast.lease.internal.LeaseArguments;
import dev.holdfast.lease.internal.LeaseThreads;
import org.jspecify.annotations.Nullable;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A lease renewed in the background while work runs under it ({@link Leases#keepAlive}, or
 * {@link #start} with a {@link LeaseRenewer} of your own).
 * Renewal runs every ttl/3; after a failed renewal (database error) it retries every ttl/10.
 *
 * <p>Validity is judged without any wall clock: the guard remembers when (by
 * {@link System#nanoTime()}) it sent the last successful renewal, and the database set the expiry
 * to <em>its</em> now + ttl, which is no earlier; so {@code sent + ttl} is a deadline the real expiry
 * cannot precede. The guard is lost — {@link #isValid()} false at once, {@code onLost} called, the
 * working thread interrupted — when a renewal finds the lease expired or taken over, or when that
 * deadline passes without a successful renewal (even if a renewal is stuck in the database).
 *
 * <p>Deadlines run on a timer thread (the service's, or one shared by guards started with
 * {@link #start}) that never borrows a connection, runs SQL or
 * calls {@code onLost} (callbacks run on a background thread), so a deadline fires on time however
 * many renewals are stuck on an exhausted pool, a stalled server or a row lock. Each renewal runs on
 * a background thread of its own with the connection's network timeout set to the time left (at
 * least 1 s), so a stuck renewal delays no other guard; it ends when that timeout fires (where the
 * driver supports one) or, while it waits for a pooled connection, at the pool's own timeout. A
 * renewal that returns after the deadline does not revive the guard: it releases the grant
 * (best effort), as {@link #close()} of a lost guard does, so that a renewal which committed
 * late does not block the lease for another TTL.
 *
 * <pre>{@code
 * try (LeaseGuard guard = leases.keepAlive(lease, Duration.ofSeconds(30), null)) {
 *     for (Batch b : batches) {
 *         guard.checkValid();                       // throws LeaseLostException once lost
 *         fence.update(conn, guard.token(), ...);   // refused if a newer grant wrote
 *     }
 * }                                                  // stops renewing, releases; throws a loss checkValid did not
 * }</pre>
 * A loss surfaces as one {@link LeaseLostException}: thrown by {@code checkValid()} inside the block,
 * or else by {@code close()}.
 */
public final class LeaseGuard implements AutoCloseable {

    /** A renewal's statement may take at least this long before the connection is abandoned. */
    private static final long MIN_RENEWAL_BOUND_MILLIS = 1000;
    /** Losses at WARNING (the logger of the lease service's own DEBUG lines). */
    private static final System.Logger LOG = System.getLogger("dev.holdfast.lease");

    private final LeaseRenewer renewer;
    private final LeaseThreads threads;
    private final long ttlNanos;
    private final Thread worker;
    private final @Nullable Consumer<LeaseLostException> onLost;
    private final Object lock = new Object();

    private volatile Lease lease;
    private volatile long validUntil;
    private volatile @Nullable LeaseLostException lost;
    /** Whether {@link #checkValid()} threw {@link #lost} (then {@link #close()} does not throw it again). */
    private volatile boolean seen;

    private volatile @Nullable RuntimeException lastFailure;
    private boolean closed;
    private @Nullable ScheduledFuture<?> renewal;
    private @Nullable ScheduledFuture<?> deadline;

    private LeaseGuard(
            LeaseRenewer renewer,
            LeaseThreads threads,
            Lease lease,
            Duration ttl,
            long sentNanos,
            Thread worker,
            @Nullable Consumer<LeaseLostException> onLost) {
        this.renewer = renewer;
        this.threads = threads;
        this.lease = lease;
        this.ttlNanos = ttl.toNanos();
        this.worker = worker;
        this.onLost = onLost;
        this.validUntil = sentNanos + ttlNanos;
        synchronized (lock) {
            scheduleRenewal(ttlNanos / 3);
            scheduleDeadline();
        }
    }

    /**
     * Guards {@code lease} with {@code renewer}, on timer and background threads shared by all guards
     * started this way (daemon threads that end when idle). It renews the lease once before it
     * returns, so a lease that is already lost is never guarded.
     *
     * @param renewer renews and releases the lease
     * @param lease   the grant to guard, as acquired (its name, owner and token)
     * @param ttl     each renewal's TTL, 3 ms to 366 days; renewals run every ttl/3
     * @param onLost  told once, on a background thread, when the lease is lost; may be null
     * @return the open guard, holding the lease as renewed by its first renewal
     * @throws LeaseNotHeldException    if {@code renewer} refused the first renewal
     * @throws LeaseLostException       if the first renewal found the lease not held, for a reason not known
     * @throws IllegalArgumentException if {@code renewer}, {@code lease} or {@code ttl} is null, the
     *                                  lease's name or owner is invalid, or {@code ttl} is out of range
     */
    public static LeaseGuard start(
            LeaseRenewer renewer, Lease lease, Duration ttl, @Nullable Consumer<LeaseLostException> onLost) {
        Arguments.notNull(renewer, "renewer");
        Lease.checked(lease);
        LeaseArguments.checkKeptAliveTtl(ttl);
        long sent = System.nanoTime();
        Lease renewed = renewer.renew(lease, ttl, ttl)
                .orElseThrow(() -> new LeaseLostException(
                        lease.name(),
                        lease.token(),
                        "Lease '" + lease.name() + "' of '" + lease.owner() + "' (token " + lease.token()
                                + ") was not held when its keep-alive started",
                        null));
        return start(renewer, LeaseThreads.SHARED, renewed, ttl, sent, onLost);
    }

    /** A guard of {@code renewed}, a lease renewed for {@code ttl} by a statement sent at {@code sentNanos}. */
    static LeaseGuard start(
            LeaseRenewer renewer,
            LeaseThreads threads,
            Lease renewed,
            Duration ttl,
            long sentNanos,
            @Nullable Consumer<LeaseLostException> onLost) {
        return new LeaseGuard(renewer, threads, renewed, ttl, sentNanos, Thread.currentThread(), onLost);
    }

    /** {@return the grant, with the expiry (database time) its last successful renewal set} */
    public Lease lease() {
        return lease;
    }

    /** {@return the grant's fencing token (renewals keep it)} */
    public long token() {
        return lease.token();
    }

    /**
     * {@return true while the lease is certainly held: not lost, not closed, and the last renewal's
     * deadline not passed}
     */
    public boolean isValid() {
        return lost == null && !closed && System.nanoTime() - validUntil < 0;
    }

    /**
     * {@return the loss, if the lease was found lost while the guard was open; else empty} If the
     * deadline has passed and the timer has not marked the loss yet, this call marks it, as the timer
     * would: the working thread is interrupted and {@code onLost} is told.
     */
    public Optional<LeaseLostException> loss() {
        if (lost == null && !closed && System.nanoTime() - validUntil >= 0) {
            markLost("was not renewed before its last confirmed expiry", null);
        }
        return Optional.ofNullable(lost);
    }

    /**
     * Throws the loss if the lease is lost, as {@link #loss()} finds it; returns normally while the
     * guard is open and valid.
     *
     * @throws LeaseLostException   if the lease is lost (same exception as given to {@code onLost})
     * @throws IllegalStateException if the guard was closed
     */
    public void checkValid() {
        Optional<LeaseLostException> loss = loss();
        if (loss.isPresent()) {
            seen = true;
            throw loss.get();
        }
        if (closed) {
            throw new IllegalStateException("The lease guard of '" + lease.name() + "' is closed");
        }
    }

    /**
     * Stops renewing and releases the lease. Does not clear an interrupt the guard caused.
     *
     * <p>A loss that {@link #checkValid()} has already thrown is not thrown again: in
     * try-with-resources that exception is the one the caller catches (throwing the same object
     * from {@code close()} would make Java replace it with "Self-suppression not permitted").
     *
     * @throws LeaseLostException if the lease was lost while guarded and {@code checkValid()} did not
     *                            throw it yet, or the release found it lost: the work may have
     *                            overlapped another holder's
     */
    @Override
    public void close() {
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            cancelTasks();
        }
        LeaseLostException loss = lost;
        if (loss == null && System.nanoTime() - validUntil >= 0) {
            loss = new LeaseLostException(
                    lease.name(),
                    lease.token(),
                    message("was not renewed before its last" + " confirmed expiry"),
                    null);
        }
        if (loss != null) {
            releaseQuietly(); // a renewal that lost in memory may still have committed
            if (seen && loss == lost) {
                return;
            }
            throw loss;
        }
        try {
            renewer.release(lease);
        } catch (LeaseNotHeldException e) {
            throw new LeaseLostException(
                    lease.name(), lease.token(), message("was lost before it was released: " + e.getMessage()), e);
        }
    }

    /** On the timer: hands the renewal to a background thread of its own (the timer never does I/O). */
    private void startRenewal() {
        try {
            threads.background().execute(this::renew);
        } catch (RejectedExecutionException e) {
            // the service is closing: the deadline still tells the worker
        }
    }

    private void renew() {
        long sent = System.nanoTime();
        int boundMillis = (int) Math.min(
                Integer.MAX_VALUE,
                Math.max(MIN_RENEWAL_BOUND_MILLIS, TimeUnit.NANOSECONDS.toMillis(validUntil - sent)));
        LeaseLostException loss = null;
        boolean releaseLate = false;
        try {
            Optional<Lease> renewed;
            try {
                renewed = renewer.renew(lease, Duration.ofNanos(ttlNanos), Duration.ofMillis(boundMillis));
            } catch (LeaseNotHeldException refusal) { // why (expired, granted again, broken by whom) becomes the cause
                markLost("was found expired, taken over or broken at renewal: " + refusal.getMessage(), refusal);
                return;
            }
            if (renewed.isEmpty()) {
                markLost("was found expired, taken over or broken at renewal", null);
                return;
            }
            synchronized (lock) {
                if (closed || lost != null) {
                    // Committed after the guard was lost: it must not keep the lease. (After a plain
                    // close, close() releases; releasing here too could make that release fail.)
                    releaseLate = lost != null;
                } else if (System.nanoTime() - validUntil >= 0) {
                    // Too late: the deadline passed while this renewal ran; the worker must be told.
                    loss = lose("was not renewed before its last confirmed expiry", lastFailure);
                    releaseLate = true;
                } else {
                    Lease l = lease;
                    lease = new Lease(
                            l.name(),
                            l.owner(),
                            l.token(),
                            l.acquiredAt(),
                            renewed.get().expiresAt());
                    validUntil = sent + ttlNanos;
                    lastFailure = null;
                    scheduleRenewal(nextRenewalDelay(ttlNanos, validUntil - System.nanoTime()));
                    scheduleDeadline();
                }
            }
        } catch (RuntimeException e) {
            synchronized (lock) {
                if (closed || lost != null) {
                    return;
                }
                lastFailure = e;
                long left = validUntil - System.nanoTime();
                if (left <= 0) {
                    loss = lose("could not be renewed before its last confirmed expiry", e);
                } else {
                    scheduleRenewal(Math.min(ttlNanos / 10, left / 2));
                }
            }
        }
        tell(loss);
        if (releaseLate) {
            releaseQuietly();
        }
    }

    /**
     * Best effort: releases the guard's grant (name, owner and token must match) after the guard
     * gave up on it, so that a renewal which committed after all does not block the lease for
     * another ttl. A grant that expired or passed on is left alone; a failure leaves it to its ttl.
     */
    private void releaseQuietly() {
        try {
            renewer.release(lease);
        } catch (LeaseNotHeldException | DatabaseException e) {
            // expired, released or taken over already; or unreachable: it expires by its ttl
        }
    }

    /** On the timer. */
    private void checkDeadline() {
        if (System.nanoTime() - validUntil >= 0) {
            markLost("was not renewed before its last confirmed expiry", lastFailure);
        }
    }

    /**
     * Marks the guard lost and interrupts the worker at once; then {@code onLost} runs on a
     * background thread. Never call it holding {@link #lock}: if the service is closed the
     * callback runs on this thread, and a callback that waits for the worker must not find the
     * guard's lock taken.
     */
    private void markLost(String why, @Nullable Throwable cause) {
        tell(lose(why, cause));
    }

    /** Every loss at WARN, with or without {@code onLost}: the worker is interrupted, and someone should know why. */
    private static void warn(LeaseLostException loss) {
        LOG.log(System.Logger.Level.WARNING, loss.getMessage(), loss.getCause());
    }

    /** Under {@link #lock}: marks the guard lost and interrupts the worker; null if it was already lost or closed. */
    private @Nullable LeaseLostException lose(String why, @Nullable Throwable cause) {
        synchronized (lock) {
            if (closed || lost != null) {
                return null;
            }
            LeaseLostException loss = new LeaseLostException(lease.name(), lease.token(), message(why), cause);
            lost = loss;
            threads.lost(String.valueOf(loss.getMessage()));
            warn(loss);
            cancelTasks();
            if (worker != null) {
                worker.interrupt();
            }
            return loss;
        }
    }

    /** Calls {@code onLost} for {@code loss} (if any); the caller must not hold {@link #lock}. */
    private void tell(@Nullable LeaseLostException loss) {
        if (loss != null && onLost != null) {
            Runnable tell = () -> {
                try {
                    onLost.accept(loss);
                } catch (RuntimeException e) {
                    loss.addSuppressed(e);
                }
            };
            try {
                threads.background().execute(tell);
            } catch (RejectedExecutionException e) {
                tell.run(); // the service is closed: nothing else runs on this thread any more
            }
        }
    }

    /**
     * When to renew after a successful renewal that leaves {@code leftNanos} until the new deadline:
     * a third of the ttl, or half the time left if that is sooner. The deadline counts from when the
     * renewal was sent, so a slow renewal leaves less than the full ttl, and the next one must also
     * end before it.
     */
    static long nextRenewalDelay(long ttlNanos, long leftNanos) {
        return Math.max(0, Math.min(ttlNanos / 3, leftNanos / 2));
    }

    private String message(String why) {
        Lease l = lease;
        return "Lease '" + l.name() + "' of '" + l.owner() + "' (token " + l.token() + ") " + why
                + "; work under it is no longer protected";
    }

    private void scheduleRenewal(long delayNanos) {
        if (renewal != null) {
            renewal.cancel(false);
        }
        renewal = threads.timer().schedule(this::startRenewal, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
    }

    private void scheduleDeadline() {
        if (deadline != null) {
            deadline.cancel(false);
        }
        deadline = threads.timer()
                .schedule(this::checkDeadline, Math.max(0, validUntil - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    private void cancelTasks() {
        if (renewal != null) {
            renewal.cancel(false);
        }
        if (deadline != null) {
            deadline.cancel(false);
        }
    }
}
