package dev.holdfast.lease.internal;

import dev.holdfast.internal.Failures;
import dev.holdfast.jdbc.internal.Jdbc;
import org.jspecify.annotations.Nullable;

import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Base64;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * A bounded {@code acquire}: passed on in memory within a cohort (when on), or through the database,
 * where the call queues in arrival order with every instance's calls, then waits for a release's hand-off (PostgreSQL: notified) or polls with backoff
 * (H2, MariaDB; a release through this service wakes its oldest poller at once), until granted or
 * the bound passes. A call that gives up looks once at who holds the lease and how many waited ahead
 * of it ({@link TimeoutLook}), then leaves the queue, giving back a grant handed to it meanwhile: one
 * connection, the read one more round trip than leaving costs, and only on that path.
 */
public final class BlockingAcquire {

    /** How long a queue entry stays valid unless its waiter refreshes it (longer for a notified waiter with a long safety poll). */
    public static final long QUEUE_ENTRY_MICROS = 2_000_000;

    static final long MAX_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    /**
     * How long past its bound an attempt may wait for a pooled connection, so that a bound shorter
     * than a hand-over from a background thread still gets one attempt, and a waiter gets its last
     * attempt at the bound.
     */
    static final long BORROW_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** The first and the longest wait before leaving the queue again after a failed attempt to. */
    private static final long GIVE_UP_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private static final long MAX_GIVE_UP_RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final SecureRandom WAITER_IDS = new SecureRandom();

    private final LeaseCalls calls;
    private final LeaseStore store;
    private final TimeoutLook look;
    /** How this database's waiters are woken: notified, by a wake-up connection, or polling. */
    private final WakeUps wakeUps;

    private final LeaseThreads threads;
    private final BoundedBorrow borrow;
    private final @Nullable CohortHandOffs cohorts;
    private final Grants grants;
    private final LeaseTuning.Polling polling;
    /** Grants this service's waiters received from a release's hand-off, without a statement of their own. */
    private final LongAdder handOffsReceived = new LongAdder();

    BlockingAcquire(
            LeaseCalls calls,
            LeaseStore store,
            TimeoutLook look,
            WakeUps wakeUps,
            LeaseThreads threads,
            @Nullable CohortHandOffs cohorts,
            Grants grants,
            LeaseTuning.Polling polling) {
        this.calls = calls;
        this.store = store;
        this.look = look;
        this.wakeUps = wakeUps;
        this.threads = threads;
        this.borrow = new BoundedBorrow(calls.dataSource(), threads);
        this.cohorts = cohorts;
        this.grants = grants;
        this.polling = polling;
        wakeUps.leaveFailuresTo((name, waiter, lapsesAt) -> giveUpLater(name, waiter, lapsesAt, 0, true));
    }

    /**
     * Acquires {@code name}, waiting at most {@code waitNanos}: passed on in memory by a holder of the
     * same owner in this service (cohort hand-off, when on), else through the database.
     */
    LeaseRow acquire(String name, String owner, long micros, long waitNanos) throws InterruptedException {
        long deadline = System.nanoTime() + waitNanos;
        CohortHandOffs cohortHandOffs = waitNanos > 0 ? cohorts : null;
        if (cohortHandOffs == null) {
            return acquireInDatabase(name, owner, micros, waitNanos, deadline);
        }
        CohortHandOffs.Call cohort = cohortHandOffs.enter(name, owner, micros);
        LeaseRow passed = cohortHandOffs.await(cohort, deadline);
        if (passed != null) {
            return grants.passedInMemory(passed);
        }
        try {
            return acquireInDatabase(name, owner, micros, waitNanos, deadline);
        } finally {
            cohortHandOffs.leave(cohort);
        }
    }

    /** Queued in the database in arrival order with every instance's calls, until {@code deadline} ({@link System#nanoTime()}). */
    private LeaseRow acquireInDatabase(String name, String owner, long micros, long waitNanos, long deadline)
            throws InterruptedException {
        boolean viaQueue = waitNanos > 0;
        // This call's own queue entry: concurrent calls of one owner are separate waiters. Null unless
        // it goes via the queue. Never waits for a listener (its first connection may be long in
        // coming): until it listens, a notified waiter polls; when it starts it wakes every waiter.
        String waiter = viaQueue ? newWaiterId() : null;
        Waiter wakeUp = wakeUps.enter(name, waiter);
        // A notified waiter's entry outlives several safety polls, each of which refreshes it; a polling
        // waiter refreshes it every few milliseconds, so its entry (and one a failed call left behind,
        // which blocks the waiters behind it until it lapses) lives QUEUE_ENTRY_MICROS.
        long queueMicros = wakeUp.notified
                ? Math.max(QUEUE_ENTRY_MICROS, polling.safetyPollNanos() / 1000 * 4)
                : polling.pollingEntryMicros();
        boolean queued = false;
        long refreshedAt = 0; // when the attempt that last joined or refreshed the queue entry was sent
        Integer published = null; // the listener that attempt published
        boolean left = false; // the timeout path left the queue already
        int attempts = 0;
        int races = 0;
        long backoff = viaQueue ? polling.minPollNanos() : LeaseTuning.Polling.MIN_POLL_NANOS;
        // Before the first attempt: no grant to this call is older. (Not the latest attempt's: on
        // PostgreSQL an attempt may pick up a grant a release handed to this waiter before it was sent.)
        long sent = System.nanoTime();
        try {
            while (true) {
                boolean joined = queued; // a waiter that never joined the queue has no entry to leave on a grant
                // Releases hand the lease only to a waiter whose notification a live listener will deliver
                // (MariaDB: whose service's wake-up connection is alive).
                Integer listener = wakeUps.wakeUpConnection(wakeUp);
                // A polling waiter refreshes its entry once a quarter of its life has passed, not at every
                // look: a MariaDB waiter whose wake-up connection watches looks every 50 ms, and each refresh is a
                // commit to flush.
                long attemptSent = System.nanoTime();
                boolean refresh = !joined
                        || attemptSent - refreshedAt >= queueMicros * 1000 / 4
                        || !java.util.Objects.equals(listener, published);
                // MariaDB: a granted waiter leaves the queue on the wake-up connection, after the grant returns.
                boolean leaveLater = joined && wakeUps.leavesEntries();
                LeaseCalls.SqlCall<Optional<LeaseRow>> attempt = waiter != null
                        ? c -> store.acquireOrQueue(
                                c, name, owner, waiter, micros, queueMicros, joined, refresh, !leaveLater, listener)
                        : c -> store.acquire(c, name, owner, micros, false);
                Optional<LeaseRow> granted;
                if (waitNanos == 0) {
                    attempts++;
                    granted = calls.acquire(name, owner, attempt);
                } else {
                    // Every attempt, the first and the one at the bound included, may take up to
                    // BORROW_GRACE past the bound to get its connection: otherwise a short bound
                    // could end without any attempt, and a waiter woken at the bound without its last one.
                    Connection borrowed = borrow.borrow(Math.max(deadline, System.nanoTime()) + BORROW_GRACE_NANOS);
                    if (borrowed == null) {
                        throw new WaitTimedOut(
                                attempts,
                                WaitTimedOut.Seen.unknown("no pooled connection came within the" + " bound (and "
                                        + TimeUnit.NANOSECONDS.toMillis(BORROW_GRACE_NANOS)
                                        + " ms more) to look with"));
                    }
                    attempts++;
                    granted = attemptOn(borrowed, attempt, name, owner, ++races >= LeaseCalls.ATTEMPTS_ON_RACE);
                    if (granted == null) {
                        continue; // lost a race (the statement had no effect): again at once, still bounded
                    }
                    races = 0;
                }
                if (granted.isPresent()) {
                    if (leaveLater && waiter != null) { // its entry is left on the wake-up connection
                        wakeUps.leave(new GrantedEntries.Leave(name, waiter, refreshedAt + queueMicros * 1000));
                    }
                    return grants.fromDatabase(
                            granted.get(), sent, viaQueue ? Grants.Path.QUEUED_ATTEMPT : Grants.Path.ACQUIRED);
                }
                if (viaQueue && refresh) {
                    refreshedAt = attemptSent; // the entry lives queueMicros from a moment after this
                    published = listener;
                }
                queued = viaQueue;
                long lapsesAt = refreshedAt + queueMicros * 1000;
                LeaseRow handed = handed(wakeUp, name, owner, waiter, micros, lapsesAt);
                if (handed != null) {
                    return grants.fromDatabase(handed, sent, Grants.Path.HANDED_OFF);
                }
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    left = true;
                    throw lookAndLeave(
                            name,
                            waiter,
                            attempts,
                            waitNanos,
                            System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(queueMicros));
                }
                if (wakeUps.notifies(wakeUp)) {
                    long safety = polling.safetyPollNanos();
                    long poll =
                            safety - safety / 5 + ThreadLocalRandom.current().nextLong(safety * 2 / 5);
                    wakeUp.signal.tryAcquire(Math.min(remaining, poll), TimeUnit.NANOSECONDS);
                    wakeUp.signal.drainPermits();
                    handed = handed(wakeUp, name, owner, waiter, micros, lapsesAt);
                    if (handed != null) {
                        return grants.fromDatabase(handed, sent, Grants.Path.HANDED_OFF);
                    }
                } else {
                    long sleep = backoff / 2 + ThreadLocalRandom.current().nextLong(backoff);
                    // A release through this service wakes its oldest polling waiter at once.
                    // MariaDB: a release elsewhere that hands it the lease too, while the wake-up connection watches;
                    // then it still looks every ten longest polls (50 ms): a lost wake-up costs no more.
                    boolean woken = wakeUps.awaitPoll(
                            wakeUp,
                            Math.min(remaining, sleep),
                            Math.min(
                                    Math.min(polling.safetyPollNanos(), queueMicros * 1000 / 2),
                                    polling.maxQueuedPollNanos() * 10),
                            deadline);
                    wakeUp.signal.drainPermits();
                    backoff = woken
                            ? polling.minPollNanos()
                            : Math.min(viaQueue ? polling.maxQueuedPollNanos() : MAX_BACKOFF_NANOS, backoff * 2);
                    handed = handed(
                            wakeUp, name, owner, waiter, micros, lapsesAt); // MariaDB: read by the wake-up connection
                    if (handed != null) {
                        return grants.fromDatabase(handed, sent, Grants.Path.HANDED_OFF);
                    }
                }
            }
        } catch (InterruptedException | RuntimeException e) {
            // Also when no attempt is known to have queued: one that failed may have committed first.
            if (waiter != null && attempts > 0 && !left) {
                giveUp(name, waiter, System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(queueMicros));
            }
            throw e;
        } finally {
            wakeUps.exit(name, wakeUp);
        }
    }

    /**
     * The timeout: one read of who holds {@code name} and how many waited ahead ({@link TimeoutLook}),
     * then leaving the queue (if {@code waiter} joined it), both on one connection borrowed for at most
     * {@link #BORROW_GRACE_NANOS} (a zero-wait call, which may run on a closed service, borrows from the
     * pool directly, as its attempt did). A read that fails only makes the holder unknown; leaving that
     * fails is tried again in the background, as {@link #giveUp} does.
     */
    private WaitTimedOut lookAndLeave(
            String name, @Nullable String waiter, int attempts, long waitNanos, long lapsesAt) {
        Connection c = null;
        String noConnection = "no connection to look with";
        try {
            c = waitNanos == 0
                    ? calls.dataSource().getConnection()
                    : borrow.borrow(System.nanoTime() + BORROW_GRACE_NANOS);
            if (c == null) {
                noConnection = "no pooled connection came within " + TimeUnit.NANOSECONDS.toMillis(BORROW_GRACE_NANOS)
                        + " ms to look with";
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the timeout is the answer; the flag stays for the caller
            noConnection = "interrupted while borrowing a connection to look with";
        } catch (SQLException | RuntimeException e) {
            noConnection = "borrowing a connection to look with failed: " + e.getMessage();
        }
        if (c == null) {
            if (waiter != null) {
                giveUpLater(name, waiter, lapsesAt, GIVE_UP_RETRY_NANOS, false);
            }
            return new WaitTimedOut(attempts, WaitTimedOut.Seen.unknown(noConnection));
        }
        WaitTimedOut.Seen seen;
        try {
            seen = Jdbc.autocommit(c, cc -> look.read(cc, name, waiter));
        } catch (SQLException | RuntimeException e) {
            seen = WaitTimedOut.Seen.unknown(TimeoutLook.failed(e));
        }
        if (waiter == null) {
            BoundedBorrow.closeQuietly(c);
        } else if (!gaveUp(c, name, waiter, false)) { // closes c
            giveUpLater(name, waiter, lapsesAt, GIVE_UP_RETRY_NANOS, false);
        }
        return new WaitTimedOut(attempts, seen);
    }

    /** How this service's waiters are woken (tests read what they counted). */
    WakeUps wakeUps() {
        return wakeUps;
    }

    /** Tests: how many grants this service's waiters took from a hand-off's notification. */
    long handOffsReceived() {
        return handOffsReceived.sum();
    }

    /**
     * The grant a release handed to this waiter (committed before it was notified), or null. MariaDB: the
     * waiter's entry (which lapses at {@code lapsesAt}) is left on its wake-up connection.
     */
    private @Nullable LeaseRow handed(
            Waiter wakeUp, String name, String owner, @Nullable String waiter, long micros, long lapsesAt) {
        Waiter.Handed h = wakeUp.handed();
        if (h == null) {
            return null;
        }
        if (waiter
                != null) { // MariaDB: read by the wake-up connection, and left there (elsewhere the hand-off left it)
            wakeUps.leave(new GrantedEntries.Leave(name, waiter, lapsesAt));
        }
        handOffsReceived.increment();
        return new LeaseRow(name, owner, h.token(), h.acquiredAt(), h.expiresAt());
    }

    /** An unguessable id of one blocking call (128 random bits, base64url): its queue entry and wake-up key. */
    private static String newWaiterId() {
        byte[] bytes = new byte[16];
        WAITER_IDS.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /**
     * Runs one attempt on {@code c} (then closed): the grant or empty, or null if it lost a race
     * with a concurrent first insert or a deadlock (the statement had no effect) and is not the
     * {@code last} try.
     */
    private @Nullable Optional<LeaseRow> attemptOn(
            Connection c, LeaseCalls.SqlCall<Optional<LeaseRow>> call, String name, String owner, boolean last) {
        try (c) {
            return Jdbc.autocommit(c, call::run);
        } catch (SQLException e) {
            if (!last && calls.isRace(e)) {
                return null;
            }
            throw Failures.database("acquiring lease '" + name + "' for '" + owner + "'", e);
        }
    }

    /**
     * Removes a waiter that gave up, giving back a grant a release handed to it meanwhile. It waits
     * at most {@link #BORROW_GRACE_NANOS} for a pooled connection (never the pool's own timeout: the
     * caller's bound and interrupt come first). If no connection comes or the statement fails (the
     * database restarting, a pooled connection it killed), a background thread tries again, after
     * 50 ms, then twice as long each time up to 1 s, until it succeeds or the entry would have
     * lapsed by itself: until then a release would hand the lease to the entry, and the grant
     * would wait out its TTL with nobody to take it.
     *
     * @param lapsesAt when the entry lapses at the latest ({@link System#nanoTime()})
     */
    private void giveUp(String name, String waiter, long lapsesAt) {
        Connection c = null;
        try {
            c = borrow.borrow(System.nanoTime() + BORROW_GRACE_NANOS);
        } catch (InterruptedException | RuntimeException e) {
            // tried again in the background
        }
        if (c == null || !gaveUp(c, name, waiter, false)) {
            giveUpLater(name, waiter, lapsesAt, GIVE_UP_RETRY_NANOS, false);
        }
    }

    /** One attempt to leave the queue on {@code c}, which it closes; false if it failed. */
    // False positive: the work returns null as its (ignored) result; NullAway sees type arguments' nullness
    // only in JSpecify mode, which needs a newer javac than Java 17's.
    @SuppressWarnings("NullAway")
    private boolean gaveUp(Connection c, String name, String waiter, boolean granted) {
        try (Connection own = c) {
            Jdbc.autocommit(own, cc -> {
                store.giveUp(cc, name, waiter, granted);
                return null;
            });
            return true;
        } catch (SQLException | RuntimeException e) {
            return false;
        }
    }

    private void giveUpLater(String name, String waiter, long lapsesAt, long delayNanos, boolean granted) {
        if (threads.isClosed() || System.nanoTime() + delayNanos - lapsesAt >= 0) {
            return; // the entry lapses first
        }
        try {
            threads.timer()
                    .schedule(
                            () -> threads.background().execute(() -> {
                                Connection c;
                                try {
                                    c = calls.dataSource().getConnection();
                                } catch (SQLException | RuntimeException e) {
                                    c = null;
                                }
                                if (c == null || !gaveUp(c, name, waiter, granted)) {
                                    giveUpLater(
                                            name,
                                            waiter,
                                            lapsesAt,
                                            Math.min(delayNanos * 2, MAX_GIVE_UP_RETRY_NANOS),
                                            granted);
                                }
                            }),
                            delayNanos,
                            TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // closed: the entry lapses by itself
        }
    }
}
