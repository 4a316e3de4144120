package dev.holdfast.lease;

import dev.holdfast.internal.Arguments;
import dev.holdfast.lease.internal.LeaseSettings;

import java.time.Duration;

/**
 * Whether a {@link LeaseService} commits concurrent calls together ({@link LeaseService.Builder#batching}).
 * One of {@link #ADAPTIVE} (the default), {@link #OFF}, {@link #CONCURRENT} or, as an expert override,
 * {@link #lockstep(Duration)}. Batching applies on PostgreSQL and MariaDB; on H2 (embedded, where a
 * statement costs no round trip) every mode runs as {@link #OFF}. {@link LeaseService#batchingStats()}
 * says whether it engaged.
 *
 * <p><b>Concurrent.</b> Concurrent {@code tryAcquire} calls of one service go to the database as one
 * multi-row acquire, and concurrent {@code release(lease)} calls as one multi-row release, each one
 * statement and one commit for up to 64 leases. A batch forms only while a statement of its kind is
 * in flight, so an idle service sends each call at once, as the statement it sends without
 * batching; a busy one commits many calls at the cost of one (up to four statements of a kind in
 * flight; another starts while one is in flight once four calls wait for it). Each call keeps its own
 * outcome (grant, refusal, release, {@link LeaseNotHeldException}) and its semantics: the rules,
 * tokens, durability and hand-off to {@code lock} waiters are those of the single-row statements.
 * Calls of one name are never in one batch; a batch locks its rows in name order, so batches of two
 * instances cannot deadlock each other. Other calls ({@code acquire}, {@code tryAcquireOrRenew}, renewals,
 * {@code release(lease, heldAtLeast)}) are not batched.
 *
 * <p>What a caller gives up: its call may wait for a statement in flight to finish before its own
 * batch is sent, and it shares its statement's fate: a statement that stalls (a row locked
 * elsewhere, a hanging connection) holds up every call in it. A call of a name in flight waits for
 * that statement instead of taking another. The calls of a batch run on the thread that started it:
 * use a data source that does not depend on the calling thread (not a thread-bound routing one).
 * Batching is not always faster: the database's group commit already shares the flush between
 * concurrent commits. It pays off with many concurrent callers on a slow-flushing database and can
 * lose elsewhere; measure with your workload.
 *
 * <p><b>Adaptive.</b> As concurrent while batching is measured to pay: short epochs (64 acquires) of
 * batching and of sending each call alone, as without batching, alternate in 16 pairs (2 when both
 * find the same mode faster by more than a quarter, 4 when each of the first 4 finds it faster by more
 * than a tenth; calls alone sooner, after 1 pair that finds them faster by more than half or 2 by more
 * than a tenth; an epoch in which calls paused is run again); the faster (batching only if at
 * least 2 % faster) then runs 128 epochs, twice as many after each comparison that chose as the one
 * before (up to 2,048), and the comparison runs again. Comparisons run only while acquires overlap: an
 * epoch whose acquires found fewer than two others in flight on average when they arrived (one or two
 * threads, a few that hold their leases a while) ends a comparison or a hold of batching, calls go
 * alone for a hold, and after it the first epoch that found enough starts a comparison. A call sent
 * alone goes straight to the database on its own thread, as without batching. While
 * batching, an acquire batch that could start waits for threads expected back with their next
 * acquire, only as long as their measured return makes it pay: a thread is waited for only if it came
 * back within the window the last time (a thread that holds its lease a while, or was late once, is
 * not), the window is at most half the measured time of an acquire statement and an eighth of the
 * time threads take from one acquire to their next, and a wait that ran out with a thread not back
 * stops all waiting for a number of batches (doubling with each such wait, up to 64). There is no
 * linger to set.
 *
 * <p><b>Lockstep</b> (deprecated, an expert override: prefer {@link #ADAPTIVE}). As concurrent, with
 * one acquire statement in flight; an acquire batch that could start waits, at most the fixed linger
 * after the last one ended, for the threads that batch answered to come back with their next acquire.
 * Only a thread that came back within the linger the last time is waited for; a thread alone never
 * waits for itself. An acquire may wait up to the linger for a thread that does not come back this
 * time: keep the linger well below the time threads hold their leases.
 *
 * <p>In every mode a release never lingers and never waits for an acquire: it waits at most for the
 * release statements in flight, then goes in the next.
 */
public final class Batching {

    /** Every call is a statement of its own. */
    public static final Batching OFF = new Batching("OFF", -1);
    /** Calls that queue while a statement of their kind is in flight go together in the next. */
    public static final Batching CONCURRENT = new Batching("CONCURRENT", 0);
    /** As {@link #CONCURRENT} while measured faster than calls alone; acquire batches wait for threads only while that pays. */
    public static final Batching ADAPTIVE = new Batching("ADAPTIVE", 0);

    private static final Duration MAX_LINGER = Duration.ofSeconds(1);

    private final String mode;
    private final long lingerNanos;

    private Batching(String mode, long lingerNanos) {
        this.mode = mode;
        this.lingerNanos = lingerNanos;
    }

    /**
     * Concurrent batching in lockstep: a batch waits at most {@code linger} for the threads the last
     * batch answered.
     *
     * @param linger more than 0, at most 1 s
     * @return lockstep batching with {@code linger}
     * @throws IllegalArgumentException if {@code linger} is null, not positive or longer than 1 s
     * @deprecated an expert override, kept for workloads measured to gain from a fixed linger; use
     *             {@link #ADAPTIVE}, which waits only while it pays
     */
    @Deprecated
    public static Batching lockstep(Duration linger) {
        Arguments.notNull(linger, "linger");
        if (linger.isNegative() || linger.isZero() || linger.compareTo(MAX_LINGER) > 0) {
            throw new IllegalArgumentException("A lockstep linger must be more than 0 and at most 1 s, not " + linger);
        }
        return new Batching("LOCKSTEP", linger.toNanos());
    }

    /** {@return whether calls are batched at all: false for {@link #OFF} only} */
    public boolean isOn() {
        return lingerNanos >= 0;
    }

    /** {@return the linger of lockstep batching; {@link Duration#ZERO} for the other modes} */
    public Duration linger() {
        return Duration.ofNanos(Math.max(0, lingerNanos));
    }

    /** The service's setting: lockstep's linger in nanoseconds, {@link LeaseSettings#ADAPTIVE}, or 0. */
    long lingerNanos() {
        return mode.equals("ADAPTIVE") ? LeaseSettings.ADAPTIVE : Math.max(0, lingerNanos);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Batching b && b.mode.equals(mode) && b.lingerNanos == lingerNanos;
    }

    @Override
    public int hashCode() {
        return mode.hashCode() * 31 + Long.hashCode(lingerNanos);
    }

    /** {@code OFF}, {@code ADAPTIVE}, {@code CONCURRENT} or {@code LOCKSTEP(PT0.0003S)}. */
    @Override
    public String toString() {
        return lingerNanos > 0 ? mode + "(" + linger() + ")" : mode;
    }
}
