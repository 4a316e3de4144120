package dev.holdfast.lease.internal;

import dev.holdfast.internal.Failures;
import dev.holdfast.DatabaseException;
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
 * A bounded {@code lock}: passed on in memory within a cohort (when on), or through the database,
 * where the call queues in arrival order with every instance's calls, then waits for a release's hand-off (PostgreSQL: notified) or polls with backoff
 * (H2, MariaDB; a release through this service wakes its oldest poller at once), until granted or
 * the bound passes. A call that gives up looks once at who holds the lease and how many waited ahead
 * of it ({@link TimeoutLook}), then leaves the queue, giving back a grant handed to it meanwhile: one
 * connection, the read one more round trip than leaving costs, and only on that path.
 */
public final class BlockingAcquire {

    /** How long a queue entry stays valid unless its waiter refreshes it (longer for a notified waiter with a long safety poll). */
    public static final long QUEUE_ENTRY_MICROS = 2_000_000;
    /** A notified waiter still re-checks this often (refreshing its queue entry, noticing expiries). */
    static final long SAFETY_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    static final long MIN_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    static final long MAX_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    /**
     * The longest poll of a queued waiter that is not notified (H2, MariaDB): a free lease waits for
     * the first waiter's next poll, as nobody else may take it, so that poll must come soon.
     */
    static final long MAX_QUEUED_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
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

    /**
     * How often waiters poll: the defaults above, or a test's; and how long a polling waiter's queue
     * entry lives ({@link #QUEUE_ENTRY_MICROS}): a MariaDB waiter whose wake-up connection watches looks at
     * least twice per entry lifetime, as no listener tells a release that it is alive.
     */
    record Polling(long safetyPollNanos, long minPollNanos, long maxQueuedPollNanos, long pollingEntryMicros) {
        static final Polling DEFAULT = new Polling(SAFETY_POLL_NANOS, MIN_BACKOFF_NANOS, MAX_QUEUED_POLL_NANOS,
                QUEUE_ENTRY_MICROS);
    }

    private final LeaseCalls calls;
    private final LeaseJdbc jdbc;
    private final TimeoutLook look;
    private final @Nullable PgWakeUps wakeUps;
    /** MariaDB: a release that hands one of this service's waiters the lease wakes it through these; null elsewhere. */
    private final @Nullable MariaDbWakeUps mariaDbWakeUps;
    private final LeaseThreads threads;
    private final BoundedBorrow borrow;
    private final LocalPollers pollers;
    private final @Nullable CohortHandOffs cohorts;
    private final Grants grants;
    private final Polling polling;
    /** Grants this service's waiters received from a release's hand-off, without a statement of their own. */
    private final LongAdder handOffsReceived = new LongAdder();

    BlockingAcquire(LeaseCalls calls, LeaseJdbc jdbc, TimeoutLook look, @Nullable PgWakeUps wakeUps,
                    @Nullable MariaDbWakeUps mariaDbWakeUps, LeaseThreads threads, LocalPollers pollers,
                    @Nullable CohortHandOffs cohorts, Grants grants, Polling polling) {
        this.calls = calls;
        this.jdbc = jdbc;
        this.look = look;
        this.wakeUps = wakeUps;
        this.mariaDbWakeUps = mariaDbWakeUps;
        this.threads = threads;
        this.borrow = new BoundedBorrow(calls.dataSource(), threads);
        this.pollers = pollers;
        this.cohorts = cohorts;
        this.grants = grants;
        this.polling = polling;
        if (mariaDbWakeUps != null) {
            mariaDbWakeUps.leaveFailuresTo((name, waiter, lapsesAt) -> giveUpLater(name, waiter, lapsesAt, 0, true));
        }
    }

    /**
     * Acquires {@code name}, waiting at most {@code waitNanos}: passed on in memory by a holder of the
     * same owner in this service (cohort hand-off, when on), else through the database.
     */
    LeaseRow lock(String name, String owner, long micros, long waitNanos) throws InterruptedException {
        long deadline = System.nanoTime() + waitNanos;
        CohortHandOffs cohortHandOffs = waitNanos > 0 ? cohorts : null;
        if (cohortHandOffs == null) {
            return lockInDatabase(name, owner, micros, waitNanos, deadline);
        }
        CohortHandOffs.Call cohort = cohortHandOffs.enter(name, owner, micros);
        LeaseRow passed = cohortHandOffs.await(cohort, deadline);
        if (passed != null) {
            return grants.passedInMemory(passed);
        }
        try {
            return lockInDatabase(name, owner, micros, waitNanos, deadline);
        } finally {
            cohortHandOffs.leave(cohort);
        }
    }

    /** Queued in the database in arrival order with every instance's calls, until {@code deadline} ({@link System#nanoTime()}). */
    private LeaseRow lockInDatabase(String name, String owner, long micros, long waitNanos, long deadline)
            throws InterruptedException {
        // The wake-ups that notify this call, or null if it polls. Never waits for the listener (its
        // first connection may be long in coming): until it listens, the waiter polls; when it starts
        // listening it wakes every registered waiter.
        PgWakeUps notifier = wakeUps != null && waitNanos > 0 && wakeUps.start() ? wakeUps : null;
        boolean viaQueue = waitNanos > 0;
        // This call's own queue entry and wake-up key: concurrent calls of one owner are separate
        // waiters. Null unless it goes via the queue (as every notified call does).
        String waiter = viaQueue ? newWaiterId() : null;
        String key = waiter != null ? PgWakeUps.key(name, waiter) : null;
        PgWakeUps.Waiter wakeUp = new PgWakeUps.Waiter(waiter);
        if (notifier != null && key != null) {
            notifier.register(key, wakeUp);
        } else if (viaQueue) {
            pollers.add(name, wakeUp);
        }
        // A notified waiter's entry outlives several safety polls, each of which refreshes it; a polling
        // waiter refreshes it every few milliseconds, so its entry (and one a failed call left behind,
        // which blocks the waiters behind it until it lapses) lives QUEUE_ENTRY_MICROS.
        long queueMicros = notifier != null ? Math.max(QUEUE_ENTRY_MICROS, polling.safetyPollNanos() / 1000 * 4)
                : polling.pollingEntryMicros();
        boolean queued = false;
        long refreshedAt = 0; // when the attempt that last joined or refreshed the queue entry was sent
        Integer published = null; // the listener that attempt published
        boolean left = false; // the timeout path left the queue already
        int attempts = 0;
        int races = 0;
        long backoff = viaQueue ? polling.minPollNanos() : MIN_BACKOFF_NANOS;
        // Before the first attempt: no grant to this call is older. (Not the latest attempt's: on
        // PostgreSQL an attempt may pick up a grant a release handed to this waiter before it was sent.)
        long sent = System.nanoTime();
        try {
            while (true) {
                boolean joined = queued; // a waiter that never joined the queue has no entry to leave on a grant
                // Releases hand the lease only to a waiter whose notification a live listener will deliver
                // (MariaDB: whose service's wake-up connection is alive).
                Integer listener = notifier != null ? notifier.listenerPid() : mariaDbWakeUps != null ? mariaDbWakeUps.listener() : null;
                // A polling waiter refreshes its entry once a quarter of its life has passed, not at every
                // look: a MariaDB waiter whose wake-up connection watches looks every 50 ms, and each refresh is a commit to flush.
                long attemptSent = System.nanoTime();
                boolean refresh = !joined || attemptSent - refreshedAt >= queueMicros * 1000 / 4
                        || !java.util.Objects.equals(listener, published);
                // MariaDB: a granted waiter leaves the queue on the wake-up connection, after the grant returns.
                boolean leaveLater = mariaDbWakeUps != null && joined && mariaDbWakeUps.connected();
                LeaseCalls.SqlCall<Optional<LeaseRow>> attempt = waiter != null
                        ? c -> jdbc.acquireOrQueue(c, name, owner, waiter, micros, queueMicros, joined, refresh,
                                !leaveLater, listener)
                        : c -> jdbc.acquire(c, name, owner, micros, false);
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
                        throw new WaitTimedOut(attempts, WaitTimedOut.Seen.unknown("no pooled connection came within the"
                                + " bound (and " + TimeUnit.NANOSECONDS.toMillis(BORROW_GRACE_NANOS) + " ms more) to look with"));
                    }
                    attempts++;
                    granted = attemptOn(borrowed, attempt, name, owner, ++races >= LeaseCalls.ATTEMPTS_ON_RACE);
                    if (granted == null) {
                        continue; // lost a race (the statement had no effect): again at once, still bounded
                    }
                    races = 0;
                }
                if (granted.isPresent()) {
                    if (mariaDbWakeUps != null && leaveLater && waiter != null) { // its entry is left on the wake-up connection
                        mariaDbWakeUps.granted(new GrantedEntries.Leave(name, waiter, refreshedAt + queueMicros * 1000));
                    }
                    return grants.fromDatabase(granted.get(), sent, viaQueue ? Grants.Path.QUEUED_ATTEMPT : Grants.Path.ACQUIRED);
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
                    throw lookAndLeave(name, waiter, attempts, waitNanos,
                            System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(queueMicros));
                }
                if (notifier != null && notifier.isListening()) {
                    long safety = polling.safetyPollNanos();
                    long poll = safety - safety / 5 + ThreadLocalRandom.current().nextLong(safety * 2 / 5);
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
                    boolean woken = mariaDbWakeUps != null && viaQueue
                            ? awaitWakeUp(mariaDbWakeUps, wakeUp, Math.min(remaining, sleep),
                                    Math.min(Math.min(polling.safetyPollNanos(), queueMicros * 1000 / 2),
                                            polling.maxQueuedPollNanos() * 10), deadline)
                            : wakeUp.signal.tryAcquire(Math.min(remaining, sleep), TimeUnit.NANOSECONDS);
                    wakeUp.signal.drainPermits();
                    backoff = woken ? polling.minPollNanos()
                            : Math.min(viaQueue ? polling.maxQueuedPollNanos() : MAX_BACKOFF_NANOS, backoff * 2);
                    handed = handed(wakeUp, name, owner, waiter, micros, lapsesAt); // MariaDB: read by the wake-up connection
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
            if (notifier != null && key != null) {
                notifier.unregister(key, wakeUp);
            } else if (viaQueue) {
                pollers.remove(name, wakeUp);
            }
        }
    }

    /**
     * The timeout: one read of who holds {@code name} and how many waited ahead ({@link TimeoutLook}),
     * then leaving the queue (if {@code waiter} joined it), both on one connection borrowed for at most
     * {@link #BORROW_GRACE_NANOS} (a zero-wait call, which may run on a closed service, borrows from the
     * pool directly, as its attempt did). A read that fails only makes the holder unknown; leaving that
     * fails is tried again in the background, as {@link #giveUp} does.
     */
    private WaitTimedOut lookAndLeave(String name, @Nullable String waiter, int attempts, long waitNanos, long lapsesAt) {
        Connection c = null;
        String noConnection = "no connection to look with";
        try {
            c = waitNanos == 0 ? calls.dataSource().getConnection() : borrow.borrow(System.nanoTime() + BORROW_GRACE_NANOS);
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

    /**
     * MariaDB: waits until a wake-up rings {@code waiter}, or its poll is due: {@code pollNanos} from
     * now, or {@code safetyNanos} while the wake-up connection is up; never past {@code deadline}. While
     * the connection is up, the waiter watches on it itself when it is its turn ({@link MariaDbWakeUps#await}).
     *
     * @return whether it was rung (a grant was handed to it, or the lease may be free now)
     */
    private static boolean awaitWakeUp(MariaDbWakeUps mariaDbWakeUps, PgWakeUps.Waiter waiter, long pollNanos,
                                     long safetyNanos, long deadline) throws InterruptedException {
        mariaDbWakeUps.waiting();
        mariaDbWakeUps.follow(waiter);
        try {
            long start = System.nanoTime();
            while (true) {
                long until = start + (mariaDbWakeUps.watching() ? Math.max(pollNanos, safetyNanos) : pollNanos);
                long left = Math.min(until, deadline) - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                if (mariaDbWakeUps.await(waiter, left)) {
                    return true;
                }
            }
        } finally {
            mariaDbWakeUps.unfollow(waiter);
        }
    }

    /** Tests: whether the PostgreSQL listener listens now. */
    boolean listening() {
        return wakeUps != null && wakeUps.isListening();
    }

    /** Tests: whether the MariaDB wake-up connection watches for hand-offs to this service's waiters. */
    boolean wakeUpWatching() {
        return mariaDbWakeUps != null && mariaDbWakeUps.watching();
    }

    /** Tests: how many of the MariaDB wake-ups' connections were handed to the pool to retire. */
    long wakeUpConnectionsRetired() {
        return mariaDbWakeUps == null ? 0 : mariaDbWakeUps.retired();
    }

    /** Tests: whether the listener found that a pooler keeps notifications from it, so waiters poll. */
    boolean listenerBehindPooler() {
        return wakeUps != null && wakeUps.isPooled();
    }

    /** Tests: how many hand-off notifications reached this service's PostgreSQL listener (0 elsewhere). */
    long grantsHeard() {
        return wakeUps == null ? 0 : wakeUps.grantsHeard();
    }

    /** Tests: how many grants this service's waiters took from a hand-off's notification. */
    long handOffsReceived() {
        return handOffsReceived.sum();
    }

    /**
     * The grant a release handed to this waiter (committed before it was notified), or null. MariaDB: the
     * waiter's entry (which lapses at {@code lapsesAt}) is left on its wake-up connection.
     */
    private @Nullable LeaseRow handed(PgWakeUps.Waiter wakeUp, String name, String owner, @Nullable String waiter,
                                      long micros, long lapsesAt) {
        PgWakeUps.Handed h = wakeUp.handed();
        if (h == null) {
            return null;
        }
        if (mariaDbWakeUps != null && waiter != null) {
            mariaDbWakeUps.granted(new GrantedEntries.Leave(name, waiter, lapsesAt));
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
    private @Nullable Optional<LeaseRow> attemptOn(Connection c, LeaseCalls.SqlCall<Optional<LeaseRow>> call, String name,
                                                String owner, boolean last) {
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
                jdbc.giveUp(cc, name, waiter, granted);
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
            threads.timer().schedule(() -> threads.background().execute(() -> {
                Connection c;
                try {
                    c = calls.dataSource().getConnection();
                } catch (SQLException | RuntimeException e) {
                    c = null;
                }
                if (c == null || !gaveUp(c, name, waiter, granted)) {
                    giveUpLater(name, waiter, lapsesAt, Math.min(delayNanos * 2, MAX_GIVE_UP_RETRY_NANOS), granted);
                }
            }), delayNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // closed: the entry lapses by itself
        }
    }
}
