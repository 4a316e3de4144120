package dev.holdfast.lease.internal;

import org.jspecify.annotations.Nullable;

import java.time.Instant;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One waiting {@code acquire} call, as its service's {@link WakeUps} know it: woken by {@link #signal},
 * and handed a grant if a release made one for it.
 */
final class Waiter {

    /** Released by a wake-up: the call decides again how long to wait, and looks if {@link #lookNow}. */
    final Semaphore signal = new Semaphore(0);
    /** Set by a wake-up that says "look again now"; a bare {@link #signal} only asks to re-decide the wait. */
    final AtomicBoolean lookNow = new AtomicBoolean();
    /** The call's waiter id (its queue entry), or null for a call that does not queue. */
    final @Nullable String id;
    /** Whether notifications wake it (PostgreSQL's listener); else it polls, and its service's releases wake it. */
    final boolean notified;

    private volatile @Nullable Handed handed;

    Waiter(@Nullable String id, boolean notified) {
        this.id = id;
        this.notified = notified;
    }

    /** A grant a release handed to this waiter, as a notification or a wake-up connection delivered it. */
    void hand(Handed grant) {
        handed = grant;
    }

    /** The grant a release handed to this waiter, or null. */
    @Nullable
    Handed handed() {
        return handed;
    }

    /** A grant a release made for a waiter: its token and times (database time). */
    record Handed(long token, Instant acquiredAt, Instant expiresAt) {}
}
