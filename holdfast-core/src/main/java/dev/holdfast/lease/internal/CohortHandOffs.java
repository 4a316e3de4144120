package dev.holdfast.lease.internal;

import org.jspecify.annotations.Nullable;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * Cohort hand-off: lock cohorting (Dice, Marathe and Shavit, PPoPP 2012) applied to leases. The
 * {@code LeaseService#acquire} calls of one service for one name under one owner form a cohort: they
 * wait in memory, in arrival order, and the service passes its database grant between them without
 * a statement, at most {@code bound} times in a row; then it releases the grant to the database,
 * where the first waiter of any instance takes it, and one local waiter (the cohort's
 * representative) queues there for the cohort's next grant. Only a cohort with no grant and no
 * representative sends a new call to the database itself (it becomes the representative).
 *
 * <p>Fencing tokens stay strictly increasing across every holder, local or remote: the first local
 * hand-off of a grant reserves a block of tokens (one durable statement) by moving the row's token
 * up by the hand-offs left; each local holder takes the next token of the block,
 * and every later grant starts above the row's token, so above all of them. If the grant ends early
 * (expired, broken), the tokens local holders took are still below the row's: whoever the database
 * grants it to next fences them out.
 *
 * <p>Times: a local holder gets the database grant as it stands: its {@code acquiredAt} (when the
 * grant began, so every later grant's is later) and its expiry, in database time. If less than half
 * of the waiter's ttl is left — estimated from the database time of the last statement plus the
 * monotonic time since it was <em>sent</em>, so never too long — the hand-off extends the grant
 * first (one statement). The reservation and the extension never shorten the grant.
 *
 * <p>Statements on a cohort's grant (reservation, extension, renewal) run one at a time, so the
 * row's token and expiry are always known here; a reservation runs with the cohort unlocked (the
 * grant marked busy), so that waiters can still give up at their deadline while it is slow. A call that only
 * waits, and gives up, changes nothing in the database.
 */
public final class CohortHandOffs {

    /** Runs a reservation: the grant's new state, empty if it is no longer held. */
    @FunctionalInterface
    interface Reserver {
        Optional<LeaseStore.Reserved> reserve(String name, String owner, long token, long tokens, long ttlMicros);
    }

    /** One {@code LeaseService#acquire} call's place in its cohort. */
    static final class Call {
        private final Cohort cohort;
        private final Cohort.@Nullable Waiter waiter;
        /** Whether this call counts as a representative, queueing in the database for the cohort. */
        private boolean representative;

        private Call(Cohort cohort, Cohort.@Nullable Waiter waiter, boolean representative) {
            this.cohort = cohort;
            this.waiter = waiter;
            this.representative = representative;
        }
    }

    private final int bound;
    private final Reserver reserver;
    private final Consumer<LeaseRow> giveBack;
    private final ConcurrentHashMap<Cohort.Key, Cohort> cohorts = new ConcurrentHashMap<>();
    private final LongAdder handOffs = new LongAdder();
    private final AtomicLong registrations = new AtomicLong();
    /** The service closed: every call goes to the database, no grant is passed on. */
    private volatile boolean closed;
    /** How often a waiting call checks whether the grant it waits for ran out unreleased. */
    static final long EXPIRY_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    /** Grants recorded between two sweeps of grants that ran out unreleased (a power of two). */
    public static final int SWEEP_EVERY = 256;

    /**
     * @param bound    the most cohort hand-offs of one database grant, at least 1
     * @param giveBack releases a lease that was handed to a waiter as it was interrupted (best effort)
     */
    CohortHandOffs(int bound, Reserver reserver, Consumer<LeaseRow> giveBack) {
        this.bound = bound;
        this.reserver = reserver;
        this.giveBack = giveBack;
    }

    /** The cohort of {@code key}, locked, created if need be. */
    private Cohort lockCohort(Cohort.Key key) {
        while (true) {
            Cohort c = cohorts.computeIfAbsent(key, Cohort::new);
            c.lock.lock();
            if (!c.removed) {
                return c;
            }
            c.lock.unlock();
        }
    }

    /**
     * Records a grant the database made to this service: its holder may pass it on. A grant of the
     * same name and owner recorded before is over (it ran out or was released elsewhere).
     *
     * @param sentNanos {@link System#nanoTime()} before the statement that made the grant was sent
     */
    void granted(LeaseRow grant, long sentNanos) {
        if ((registrations.incrementAndGet() & (SWEEP_EVERY - 1)) == 0) {
            sweep();
        }
        Cohort c = lockCohort(new Cohort.Key(grant.name(), grant.owner()));
        try {
            c.hasGrant = true;
            c.open = !closed;
            c.grantToken = grant.token();
            c.grantSentNanos = sentNanos;
            c.grantAcquiredAt = grant.acquiredAt();
            c.rowToken = grant.token();
            c.holderToken = grant.token();
            c.holderSinceNanos = sentNanos;
            c.expiresAt = grant.expiresAt();
            c.dbNow = grant.acquiredAt();
            c.sentNanos = sentNanos;
            c.handOffs = 0;
            c.reserved = false;
            c.unsureTokens = 0;
        } finally {
            c.lock.unlock();
        }
    }

    /**
     * Places a {@code acquire} call: in its cohort's queue if the cohort holds a grant or has a
     * representative in the database, else as the representative itself. Runs no statement.
     */
    Call enter(String name, String owner, long ttlMicros) {
        Cohort c = lockCohort(new Cohort.Key(name, owner));
        try {
            if (closed) {
                return new Call(c, null, false);
            }
            if (!(c.hasGrant && c.open) && c.representatives == 0) {
                c.representatives++;
                return new Call(c, null, true);
            }
            Cohort.Waiter w = new Cohort.Waiter(ttlMicros);
            c.waiters.addLast(w);
            return new Call(c, w, false);
        } finally {
            c.lock.unlock();
        }
    }

    /**
     * Waits in the cohort until the lease is passed to the call: returns it, or null if the call
     * must go to the database (as the representative, or because the deadline passed or the service
     * closed). A representative must call {@link #leave} when its database attempts end.
     *
     * @throws InterruptedException if interrupted (a lease handed meanwhile was given back)
     */
    @Nullable
    LeaseRow await(Call call, long deadlineNanos) throws InterruptedException {
        Cohort.Waiter w = call.waiter;
        if (w == null) {
            return null;
        }
        Cohort c = call.cohort;
        boolean interrupted = false;
        try {
            while (true) {
                long left = deadlineNanos - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                w.signal.tryAcquire(Math.min(left, EXPIRY_CHECK_NANOS), TimeUnit.NANOSECONDS);
                c.lock.lock();
                try {
                    if (c.hasGrant && c.open && !c.estimatedNow().isBefore(c.expiresAt)) {
                        c.open = false; // its holder never released it: the database may grant it again
                        c.promoteIfNeeded();
                    }
                    if (w.handed != null || w.toDatabase) {
                        break;
                    }
                } finally {
                    c.lock.unlock();
                }
            }
        } catch (InterruptedException e) {
            interrupted = true;
        }
        LeaseRow handed;
        c.lock.lock();
        try {
            c.waiters.remove(w);
            handed = w.handed;
            call.representative = w.toDatabase; // counted as one by whoever sent it, even at close
            if (interrupted && call.representative) {
                c.representatives--;
                call.representative = false;
            }
            if (handed == null) {
                c.promoteIfNeeded(); // it leaves: a waiter behind it may have to go now
            }
        } finally {
            c.lock.unlock();
        }
        if (interrupted) {
            if (handed != null) {
                giveBack.accept(handed); // to the next waiter, or to the database
            }
            throw new InterruptedException();
        }
        return handed;
    }

    /** A representative's database attempts ended (granted or not): if need be, the next waiter goes. */
    void leave(Call call) {
        if (!call.representative) {
            return;
        }
        Cohort c = call.cohort;
        c.lock.lock();
        try {
            c.representatives--;
            call.representative = false;
            c.promoteIfNeeded();
            dropIfIdle(c);
        } finally {
            c.lock.unlock();
        }
    }

    /** Under the lock: forgets a cohort with no grant, no waiter and no representative. */
    private void dropIfIdle(Cohort c) {
        if (!c.hasGrant && c.idle()) {
            c.removed = true;
            cohorts.remove(c.key, c);
        }
    }

    /**
     * Decides the release of {@code lease}: null if this service holds no grant for it here (release
     * it as it is); else passed on in memory, already released, or release the row's token.
     */
    @Nullable
    CohortRelease release(LeaseRow lease, boolean heldAtLeast) {
        Cohort c = cohorts.get(new Cohort.Key(lease.name(), lease.owner()));
        if (c == null) {
            return null;
        }
        c.lock.lock();
        try {
            c.awaitSettled();
            if (!c.hasGrant || lease.token() != c.holderToken) {
                return c.hasGrant && lease.token() >= c.grantToken && lease.token() < c.holderToken
                        ? new CohortRelease.AlreadyReleased(c.holder())
                        : null;
            }
            // From before the grant was sent to the hand-off: at least the time between them.
            long extraMicros = (c.holderSinceNanos - c.grantSentNanos) / 1000;
            CohortRelease.ToDatabase before = new CohortRelease.ToDatabase(
                    c.rowToken, extraMicros, c.unsureTokens, Cohort.granted(c.grantAcquiredAt));
            long grant = c.grantToken;
            if (c.open && !heldAtLeast && c.handOffs < bound && !c.waiters.isEmpty() && handOff(c)) {
                return new CohortRelease.HandedOn();
            }
            if (!c.hasGrant || c.grantToken != grant) {
                return before; // the grant ended while a reservation ran: the database tells how
            }
            // Stays recorded until the database release succeeds, so that a retry after a failure
            // still maps to the grant; meanwhile the first waiter queues in the database.
            c.open = false;
            c.promoteIfNeeded();
            return new CohortRelease.ToDatabase(
                    c.rowToken, extraMicros, c.unsureTokens, Cohort.granted(c.grantAcquiredAt));
        } finally {
            c.lock.unlock();
        }
    }

    /** After the database release (or refusal) of a {@link CohortRelease.ToDatabase} of {@code rowToken}: forgets the grant. */
    void releasedToDatabase(String name, String owner, long rowToken) {
        Cohort c = cohorts.get(new Cohort.Key(name, owner));
        if (c == null) {
            return;
        }
        c.lock.lock();
        try {
            if (c.hasGrant && c.rowToken == rowToken) {
                c.hasGrant = false;
            }
            c.promoteIfNeeded();
            dropIfIdle(c);
        } finally {
            c.lock.unlock();
        }
    }

    /**
     * Under the lock: passes the grant to the first waiter; false if it turned out lost (then closed)
     * or nobody waits any more. The first hand-off of a grant reserves the tokens of the hand-offs
     * left, and one that finds less than half of the waiter's ttl left extends the grant: one
     * statement for both, run with the cohort unlocked and the grant marked busy.
     */
    private boolean handOff(Cohort c) {
        long grant = c.grantToken;
        for (int statements = 0; ; statements++) {
            Cohort.Waiter first = c.waiters.peekFirst();
            if (first == null) {
                return false; // every waiter gave up meanwhile
            }
            long tokens = c.reserved ? 0 : bound - c.handOffs;
            boolean extend = Duration.between(c.estimatedNow(), c.expiresAt).toNanos() / 1000 < first.ttlMicros / 2;
            if (tokens == 0 && !extend) {
                break;
            }
            if (statements == 2) {
                return false; // statements slower than half a ttl: the database hands it on instead
            }
            long rowToken = c.rowToken;
            long sent = System.nanoTime();
            Optional<LeaseStore.Reserved> r = null;
            c.busyGrant = grant;
            c.lock.unlock();
            try {
                r = reserver.reserve(c.key.name(), c.key.owner(), rowToken, tokens, extend ? first.ttlMicros : 0);
            } finally {
                c.lock.lock();
                if (c.busyGrant == grant) {
                    c.busyGrant = Cohort.NOT_BUSY;
                }
                c.settled.signalAll();
                if (r == null && c.hasGrant && c.grantToken == grant) { // it failed: the outcome is unknown
                    c.open = false;
                    c.unsureTokens = tokens;
                    c.promoteIfNeeded(); // the first waiter queues in the database
                }
            }
            if (!c.hasGrant || c.grantToken != grant) {
                return false;
            }
            if (r.isEmpty()) {
                c.open = false;
                return false;
            }
            c.reserved(r.get(), sent);
            c.reserved = true;
            if (!c.open) {
                return false; // unlocked or closed meanwhile
            }
            // Waiters may have left meanwhile: decide again for the first one now (no statement if it fits).
        }
        Cohort.Waiter next = c.waiters.pollFirst();
        c.holderToken++;
        c.handOffs++;
        c.holderSinceNanos = System.nanoTime();
        next.handed = c.holder();
        next.signal.release();
        handOffs.increment();
        return true;
    }

    /**
     * Locks the cohort whose current holder {@code lease} is, for a statement on its grant: the
     * caller uses {@link Cohort.Held#rowToken()} and must call {@link Cohort.Held#done}. Null if there is none.
     */
    Cohort.@Nullable Held hold(LeaseRow lease) {
        Cohort c = cohorts.get(new Cohort.Key(lease.name(), lease.owner()));
        if (c == null) {
            return null;
        }
        c.lock.lock();
        c.awaitSettled();
        if (!c.hasGrant || lease.token() != c.holderToken) {
            c.lock.unlock();
            return null;
        }
        return new Cohort.Held(c);
    }

    /** The row's token for diagnosing {@code lease}: the grant's if {@code lease} came from it. */
    long rowToken(LeaseRow lease) {
        Cohort c = cohorts.get(new Cohort.Key(lease.name(), lease.owner()));
        if (c == null) {
            return lease.token();
        }
        c.lock.lock();
        try {
            return c.hasGrant && lease.token() >= c.grantToken && lease.token() <= c.holderToken
                    ? c.rowToken
                    : lease.token();
        } finally {
            c.lock.unlock();
        }
    }

    /**
     * Forgets grants that ran out (by the safe-side estimate of database time) with nobody waiting,
     * so that leases never released do not pile up here. A late release of one is then diagnosed
     * by the database alone.
     */
    private void sweep() {
        for (Cohort c : cohorts.values()) {
            if (c.lock.tryLock()) {
                try {
                    if (c.idle()
                            && c.busyGrant == Cohort.NOT_BUSY
                            && (!c.hasGrant || !c.estimatedNow().isBefore(c.expiresAt))) {
                        c.hasGrant = false;
                        dropIfIdle(c);
                    }
                } finally {
                    c.lock.unlock();
                }
            }
        }
    }

    /** The grants of {@code name} (of {@code owner}, or of every owner if null) were released or broken here: no more hand-offs. */
    void closeAll(String name, @Nullable String owner) {
        if (owner != null) {
            close(cohorts.get(new Cohort.Key(name, owner)));
            return;
        }
        for (Cohort c : cohorts.values()) {
            if (c.key.name().equals(name)) {
                close(c);
            }
        }
    }

    private static void close(@Nullable Cohort c) {
        if (c == null) {
            return;
        }
        c.lock.lock();
        try {
            c.open = false;
            c.promoteIfNeeded();
        } finally {
            c.lock.unlock();
        }
    }

    /** The service closes: every waiter goes to the database (and finds the service closed). */
    void closeAll() {
        closed = true;
        for (Cohort c : cohorts.values()) {
            c.lock.lock();
            try {
                c.open = false;
                for (Cohort.Waiter w; (w = c.waiters.pollFirst()) != null; ) {
                    c.representatives++; // until its call leaves
                    w.toDatabase = true;
                    w.signal.release();
                }
            } finally {
                c.lock.unlock();
            }
        }
    }

    /** Tests: how many grants and cohorts are recorded. */
    int recorded() {
        return cohorts.size();
    }

    /** Tests: calls waiting for the grant of {@code name} under {@code owner}. */
    int waiters(String name, String owner) {
        Cohort c = cohorts.get(new Cohort.Key(name, owner));
        if (c == null) {
            return 0;
        }
        c.lock.lock();
        try {
            return c.waiters.size();
        } finally {
            c.lock.unlock();
        }
    }

    /** Tests and benchmarks: cohort hand-offs so far. */
    long handOffs() {
        return handOffs.sum();
    }
}
