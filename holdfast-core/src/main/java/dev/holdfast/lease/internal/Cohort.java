package dev.holdfast.lease.internal;

import dev.holdfast.internal.Invariants;
import org.jspecify.annotations.Nullable;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The calls of one name and owner waiting for a cohort hand-off ({@link CohortHandOffs}), and the
 * service's database grant of it, if any. Its fields are guarded by its {@link #lock}.
 */
final class Cohort {

    /** {@link #busyGrant} when no statement runs on a grant with the cohort unlocked. */
    static final long NOT_BUSY = Long.MIN_VALUE;

    /** A cohort's name and owner. */
    record Key(String name, String owner) {}

    /** One waiting call. Its fields are guarded by its cohort's lock. */
    static final class Waiter {
        final Semaphore signal = new Semaphore(0);
        final long ttlMicros;

        @Nullable
        LeaseRow handed;
        /** Go to the database: as the cohort's representative, or because the service closed. */
        boolean toDatabase;

        Waiter(long ttlMicros) {
            this.ttlMicros = ttlMicros;
        }
    }

    final Key key;
    final ReentrantLock lock = new ReentrantLock();
    /** Signalled when a statement on a grant ends ({@link #busyGrant} reset). */
    final Condition settled = lock.newCondition();

    final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    /** Calls queueing in the database for this cohort. */
    int representatives;
    /** Dropped from the map: a call that found it must look again. */
    boolean removed;

    // The current database grant, while hasGrant (its instants are set with the first grant, never cleared).
    boolean hasGrant;
    /** Whether its holder may pass it on: false once it is known lost or released elsewhere. */
    boolean open;

    long grantToken;
    long grantSentNanos;

    @Nullable
    Instant grantAcquiredAt;

    long rowToken;
    long holderToken;
    /** When the current holder got it ({@link System#nanoTime()}; the grant's send time for its first). */
    long holderSinceNanos;

    @Nullable
    Instant expiresAt;

    @Nullable
    Instant dbNow;

    long sentNanos;
    int handOffs;
    boolean reserved;
    /** A reservation whose outcome is unknown (it failed): its token count, else 0. */
    long unsureTokens;
    /** The grant (its first token) a statement runs on with the cohort unlocked, else {@link #NOT_BUSY}: other statements on it wait. */
    long busyGrant = NOT_BUSY;

    Cohort(Key key) {
        this.key = key;
    }

    /** Database time now, estimated on the late side (the statement read its clock after it was sent). */
    Instant estimatedNow() {
        return granted(dbNow).plusNanos(System.nanoTime() - sentNanos);
    }

    /** One of the grant's instants, read only while {@link #hasGrant}: so after a grant set them. */
    static Instant granted(@Nullable Instant instant) {
        return Invariants.nonNull(instant, "a grant's instant read before any grant");
    }

    void reserved(LeaseStore.Reserved r, long sent) {
        rowToken = r.token();
        expiresAt = r.expiresAt();
        dbNow = r.now();
        sentNanos = sent;
    }

    /** Under the lock: waits until no statement on the current grant runs (one on an earlier grant does not matter). */
    void awaitSettled() {
        while (busyGrant == grantToken) {
            settled.awaitUninterruptibly();
        }
    }

    LeaseRow holder() {
        return new LeaseRow(key.name(), key.owner(), holderToken, granted(grantAcquiredAt), granted(expiresAt));
    }

    boolean idle() {
        return waiters.isEmpty() && representatives == 0;
    }

    /** Under the lock: with no usable grant and nobody in the database for it, the first waiter goes there. */
    void promoteIfNeeded() {
        if ((!hasGrant || !open) && representatives == 0) {
            Waiter first = waiters.pollFirst();
            if (first != null) {
                representatives++;
                first.toDatabase = true;
                first.signal.release();
            }
        }
    }

    /** A cohort locked for a statement on its grant. */
    static final class Held {
        private final Cohort c;

        Held(Cohort c) {
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

        /** After a refused renewal: the grant is lost, no more hand-offs of it. */
        void lost() {
            c.open = false;
            c.promoteIfNeeded();
        }

        void done() {
            c.lock.unlock();
        }
    }
}
