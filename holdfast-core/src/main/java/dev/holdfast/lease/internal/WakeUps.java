package dev.holdfast.lease.internal;

import org.jspecify.annotations.Nullable;

import java.util.concurrent.TimeUnit;

/**
 * How the waiters of one service are woken, made once by its database's store ({@link LeaseStore#wakeUps}):
 * {@link PgWakeUps} (notified on a listener connection), {@link MariaDbWakeUps} (a wake-up connection that
 * a release's kill wakes) or {@link Polled} (H2, or MariaDB with its wake-up connection off). Waiters
 * that are not notified poll, and a release through the same service wakes its oldest at once
 * ({@link LocalPollers}). A wake-up is a hint: every grant is a statement's decision.
 */
abstract sealed class WakeUps implements AutoCloseable permits PgWakeUps, MariaDbWakeUps, WakeUps.Polled {

    final LocalPollers pollers;

    WakeUps(LocalPollers pollers) {
        this.pollers = pollers;
    }

    /**
     * A call of {@code name} starts waiting: woken from now on until it {@link #exit}s. A call without
     * a queue entry ({@code id} null: it does not wait) is not registered.
     */
    Waiter enter(String name, @Nullable String id) {
        Waiter w = new Waiter(id, false);
        if (id != null) {
            pollers.add(name, w);
        }
        return w;
    }

    /** The call of {@link #enter} waits no longer. */
    void exit(String name, Waiter w) {
        if (w.id != null) {
            pollers.remove(name, w);
        }
    }

    /**
     * The id of the wake-up connection that {@code w} publishes in its queue entry now (PostgreSQL: the
     * listener's backend pid; MariaDB: the wake-up connection's id), so that a release may hand it the
     * lease; null: none will.
     */
    @Nullable
    Integer wakeUpConnection(Waiter w) {
        return null;
    }

    /** Whether {@code w} sleeps until notified now, looking only at its safety poll, instead of polling. */
    boolean notifies(Waiter w) {
        return false;
    }

    /** Whether a granted waiter that joined the queue leaves its entry on the wake-up connection, not in its attempt. */
    boolean leavesEntries() {
        return false;
    }

    /** A granted waiter's queue entry, to leave on the wake-up connection ({@link #leavesEntries}). */
    void leave(GrantedEntries.Leave entry) {}

    /** Where entries go that the wake-up connection could not leave (its failure, the service closing). */
    void leaveFailuresTo(GrantedEntries.Leaving leaving) {}

    /**
     * A polling waiter's wait between two looks: at most {@code pollNanos}, never past {@code deadline};
     * {@code safetyNanos} is how long it may wait while a wake-up connection watches for it.
     *
     * @return whether a wake-up came (a grant was handed to it, or the lease may be free now)
     */
    boolean awaitPoll(Waiter w, long pollNanos, long safetyNanos, long deadline) throws InterruptedException {
        return w.signal.tryAcquire(pollNanos, TimeUnit.NANOSECONDS);
    }

    /** Tests: whether the PostgreSQL listener listens now. */
    boolean listening() {
        return false;
    }

    /** Tests: whether the MariaDB wake-up connection watches for hand-offs to this service's waiters. */
    boolean watching() {
        return false;
    }

    /** Tests: how many of the MariaDB wake-ups' connections were handed to the pool to retire. */
    long retired() {
        return 0;
    }

    /** Tests: whether the listener found that a pooler keeps notifications from it, so waiters poll. */
    boolean behindPooler() {
        return false;
    }

    /** Tests: how many hand-off notifications reached this service's PostgreSQL listener. */
    long grantsHeard() {
        return 0;
    }

    @Override
    public void close() {}

    /** Waiters poll; a release through the same service wakes its oldest (H2; MariaDB without wake-ups). */
    static final class Polled extends WakeUps {

        Polled(LocalPollers pollers) {
            super(pollers);
        }
    }
}
