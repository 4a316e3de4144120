package dev.holdfast.lease;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * Cohort hand-off: lock cohorting (Dice, Marathe and Shavit, PPoPP 2012) applied to leases. A
 * service passes its database grant of a name between its own {@link LeaseService#lock} calls of
 * the same owner in memory, at most {@code bound} times in a row, then releases it to the
 * database, where the first waiter of any instance takes it. A local hand-off runs no statement.
 *
 * <p>Fencing tokens stay strictly increasing across every holder, local or remote: the first call
 * that waits for its own service's grant reserves a block of tokens (one durable statement, run
 * while the holder still works) by moving the row's token up by the hand-offs left; each local
 * holder takes the next token of the block, and every later grant starts above the row's token,
 * so above all of them. If the grant ends early (expired, broken), tokens the holders took are
 * still below the row's: whoever the database grants it to next fences them out.
 *
 * <p>Times: a local holder gets the database grant as it stands: its {@code acquiredAt} (when the
 * grant began, so every later grant's is later) and its expiry, in database time. If less
 * than half of the waiter's ttl is left — estimated from the database time of the last statement
 * plus the monotonic time since it was <em>sent</em>, so never too long — the hand-off extends
 * the grant first (one statement). The reservation and the extension never shorten the grant.
 *
 * <p>Every statement on a cohort's grant (reservation, extension, renewal, release) runs under
 * the cohort's lock, so the row's token and expiry are always known here.
 */
final class LocalHandOffs {

    /** Runs a reservation: the grant's new state, empty if it is no longer held. */
    @FunctionalInterface
    interface Reserver {
        Optional<LeaseJdbc.Reserved> reserve(String name, String owner, long token, long tokens, long ttlMicros);
    }

    /** Outcome of a release of a lease this service may have passed on. */
    sealed interface Release permits HandedOn, AlreadyReleased, ToDatabase {
    }

    /** Passed to a local waiter: nothing to do in the database. */
    record HandedOn() implements Release {
    }

    /** The lease was passed on earlier (a second release); {@code current} is the local holder's. */
    record AlreadyReleased(Lease current) implements Release {
    }

    /**
     * Release the database grant: {@code token} is the row's, {@code extraMicros} how much later
     * than the grant the releasing holder took it (added to a minimum hold).
     */
    record ToDatabase(long token, long extraMicros) implements Release {
    }

    private record Key(String name, String owner) {
    }

    /** One waiting call. Its fields are guarded by its cohort's lock. */
    private static final class Waiter {
        final Semaphore signal = new Semaphore(0);
        final long ttlMicros;
        Lease handed;
        boolean sentBack;

        Waiter(long ttlMicros) {
            this.ttlMicros = ttlMicros;
        }
    }

    /** The service's database grant of one name and owner, and its local waiters. */
    private static final class Cohort {
        final Key key;
        final ReentrantLock lock = new ReentrantLock();
        final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
        final long grantToken;
        final long grantSentNanos;
        final Instant grantAcquiredAt;
        long rowToken;
        long holderToken;
        /** When the current holder got the lease ({@link System#nanoTime()}); the grant's send time for its first holder. */
        long holderSinceNanos;
        Instant expiresAt;
        Instant dbNow;
        long sentNanos;
        int handOffs;
        boolean reserved;
        /** Accepts waiters and hands off; false once it ended or its grant is known lost. */
        boolean open = true;

        Cohort(Lease grant, long sentNanos) {
            this.key = new Key(grant.name(), grant.owner());
            this.grantToken = grant.token();
            this.grantSentNanos = sentNanos;
            this.holderSinceNanos = sentNanos;
            this.rowToken = grant.token();
            this.holderToken = grant.token();
            this.grantAcquiredAt = grant.acquiredAt();
            this.expiresAt = grant.expiresAt();
            this.dbNow = grant.acquiredAt();
            this.sentNanos = sentNanos;
        }

        /** Database time now, estimated on the late side (the statement read its clock after it was sent). */
        Instant estimatedNow() {
            return dbNow.plusNanos(System.nanoTime() - sentNanos);
        }

        void reserved(LeaseJdbc.Reserved r, long sent) {
            rowToken = r.token();
            expiresAt = r.expiresAt();
            dbNow = r.now();
            sentNanos = sent;
        }

        Lease holder() {
            return new Lease(key.name(), key.owner(), holderToken, grantAcquiredAt, expiresAt);
        }

        /** Stops hand-offs and sends every waiter to the database. Under the lock. */
        void close() {
            open = false;
            for (Waiter w; (w = waiters.pollFirst()) != null; ) {
                w.sentBack = true;
                w.signal.release();
            }
        }
    }

    private final int bound;
    private final Reserver reserver;
    private final Consumer<Lease> giveBack;
    private final ConcurrentHashMap<Key, Cohort> cohorts = new ConcurrentHashMap<>();
    private final LongAdder handOffs = new LongAdder();
    private final AtomicLong registrations = new AtomicLong();
    /** Grants recorded between two sweeps of grants that ran out unreleased (a power of two). */
    static final int SWEEP_EVERY = 256;

    /**
     * @param bound    the most local hand-offs of one database grant, at least 1
     * @param giveBack releases a lease that was handed to a waiter as it was interrupted (best effort)
     */
    LocalHandOffs(int bound, Reserver reserver, Consumer<Lease> giveBack) {
        this.bound = bound;
        this.reserver = reserver;
        this.giveBack = giveBack;
    }

    /**
     * Records a grant the database made to this service: its holder may pass it on. A grant of the
     * same name and owner recorded before is over (it ran out or was released): its waiters go to
     * the database.
     *
     * @param sentNanos {@link System#nanoTime()} before the statement that made the grant was sent
     */
    void granted(Lease grant, long sentNanos) {
        if ((registrations.incrementAndGet() & (SWEEP_EVERY - 1)) == 0) {
            sweep();
        }
        Cohort previous = cohorts.put(new Key(grant.name(), grant.owner()), new Cohort(grant, sentNanos));
        if (previous != null) {
            previous.lock.lock();
            try {
                previous.close();
            } finally {
                previous.lock.unlock();
            }
        }
    }

    /**
     * Waits for this service's holder of {@code name} under {@code owner} to pass the lease on.
     * Returns the lease, or null if the caller must go to the database: no such holder, its hand-offs
     * are spoken for, its grant ended meanwhile, or the deadline passed.
     *
     * @throws InterruptedException if interrupted (a lease handed meanwhile was given back)
     * @throws dev.holdfast.DatabaseException if the reservation failed
     */
    Lease await(String name, String owner, long ttlMicros, long deadlineNanos) throws InterruptedException {
        Cohort c = cohorts.get(new Key(name, owner));
        if (c == null) {
            return null;
        }
        Waiter w = new Waiter(ttlMicros);
        c.lock.lock();
        try {
            if (!c.open || c.handOffs + c.waiters.size() >= bound) {
                return null;
            }
            if (!c.reserved) {
                // While the holder works: at its release the block is there, and the hand-off is in memory.
                long sent = System.nanoTime();
                Optional<LeaseJdbc.Reserved> r = reserver.reserve(name, owner, c.rowToken, bound - c.handOffs, ttlMicros);
                if (r.isEmpty()) {
                    c.close(); // the grant ran out or was broken: the holder learns it at its release
                    return null;
                }
                c.reserved(r.get(), sent);
                c.reserved = true;
            }
            c.waiters.addLast(w);
        } finally {
            c.lock.unlock();
        }
        boolean interrupted = false;
        try {
            while (true) {
                long left = deadlineNanos - System.nanoTime();
                if (left <= 0 || !w.signal.tryAcquire(left, TimeUnit.NANOSECONDS)) {
                    break;
                }
                c.lock.lock();
                try {
                    if (w.handed != null || w.sentBack) {
                        break;
                    }
                } finally {
                    c.lock.unlock();
                }
            }
        } catch (InterruptedException e) {
            interrupted = true;
        }
        c.lock.lock();
        try {
            c.waiters.remove(w);
            if (w.handed != null && !interrupted) {
                return w.handed;
            }
        } finally {
            c.lock.unlock();
        }
        if (interrupted) {
            if (w.handed != null) {
                giveBack.accept(w.handed); // to the next waiter, or to the database
            }
            throw new InterruptedException();
        }
        return null;
    }

    /**
     * Decides the release of {@code lease}: null if this service holds no grant for it here (release
     * it as it is); else passed on in memory, already released, or release the row's token.
     */
    Release release(Lease lease, boolean heldAtLeast) {
        Cohort c = cohorts.get(new Key(lease.name(), lease.owner()));
        if (c == null) {
            return null;
        }
        c.lock.lock();
        try {
            if (lease.token() != c.holderToken) {
                return lease.token() >= c.grantToken && lease.token() < c.holderToken
                        ? new AlreadyReleased(c.holder()) : null;
            }
            if (c.open && !heldAtLeast && c.handOffs < bound) {
                Waiter next = c.waiters.peekFirst();
                if (next != null && handOff(c, next)) {
                    return new HandedOn();
                }
            }
            c.close();
            cohorts.remove(c.key, c);
            // From before the grant was sent to the hand-off: at least the time between them.
            return new ToDatabase(c.rowToken, (c.holderSinceNanos - c.grantSentNanos) / 1000);
        } finally {
            c.lock.unlock();
        }
    }

    /** Under the lock: passes the grant to {@code next}; false if it turned out lost. */
    private boolean handOff(Cohort c, Waiter next) {
        long leftMicros = Duration.between(c.estimatedNow(), c.expiresAt).toNanos() / 1000;
        if (leftMicros < next.ttlMicros / 2) {
            long sent = System.nanoTime();
            Optional<LeaseJdbc.Reserved> r = reserver.reserve(c.key.name(), c.key.owner(), c.rowToken, 0, next.ttlMicros);
            if (r.isEmpty()) {
                return false;
            }
            c.reserved(r.get(), sent);
        }
        c.waiters.pollFirst();
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
     * caller uses {@link Held#rowToken()} and must call {@link Held#done}. Null if there is none.
     */
    Held hold(Lease lease) {
        Cohort c = cohorts.get(new Key(lease.name(), lease.owner()));
        if (c == null) {
            return null;
        }
        c.lock.lock();
        if (lease.token() != c.holderToken) {
            c.lock.unlock();
            return null;
        }
        return new Held(c);
    }

    /** A cohort locked for a statement on its grant. */
    static final class Held {
        private final Cohort c;

        private Held(Cohort c) {
            this.c = c;
        }

        long rowToken() {
            return c.rowToken;
        }

        /** After a renewal: the grant's new expiry (the renewal's now is that minus the ttl). */
        void renewed(Instant expiresAt, long ttlMicros, long sentNanos) {
            c.expiresAt = expiresAt;
            c.dbNow = expiresAt.minusNanos(ttlMicros * 1000);
            c.sentNanos = sentNanos;
        }

        void done() {
            c.lock.unlock();
        }
    }

    /** The row's token for diagnosing {@code lease}: the grant's if {@code lease} came from it. */
    long rowToken(Lease lease) {
        Cohort c = cohorts.get(new Key(lease.name(), lease.owner()));
        if (c == null) {
            return lease.token();
        }
        c.lock.lock();
        try {
            return lease.token() >= c.grantToken && lease.token() <= c.holderToken ? c.rowToken : lease.token();
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
                    if (c.waiters.isEmpty() && !c.estimatedNow().isBefore(c.expiresAt)) {
                        c.open = false;
                        cohorts.remove(c.key, c);
                    }
                } finally {
                    c.lock.unlock();
                }
            }
        }
    }

    /** Tests: how many grants are recorded. */
    int recorded() {
        return cohorts.size();
    }

    /** The service closes: every waiter goes to the database (and finds the service closed). */
    void closeAll() {
        for (Cohort c : cohorts.values()) {
            c.lock.lock();
            try {
                c.close();
            } finally {
                c.lock.unlock();
            }
        }
    }

    /** The grants of {@code name} (of {@code owner}, or of every owner if null) were released or broken here: no more hand-offs. */
    void closeAll(String name, String owner) {
        for (Cohort c : cohorts.values()) {
            if (c.key.name().equals(name) && (owner == null || c.key.owner().equals(owner))) {
                c.lock.lock();
                try {
                    c.close();
                } finally {
                    c.lock.unlock();
                }
            }
        }
    }

    /** Tests: calls waiting for the grant of {@code name} under {@code owner}. */
    int waiters(String name, String owner) {
        Cohort c = cohorts.get(new Key(name, owner));
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

    /** Tests and benchmarks: local hand-offs so far. */
    long handOffs() {
        return handOffs.sum();
    }
}
