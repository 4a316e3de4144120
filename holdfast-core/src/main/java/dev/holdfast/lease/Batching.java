package dev.holdfast.lease;

import dev.holdfast.lease.internal.BatchMode;

/**
 * Whether a {@link LeaseService} commits concurrent calls together ({@link LeaseService.Builder#batching}).
 * One of {@link #OFF} (the default) or {@link #CONCURRENT}, which is opt-in. Batching applies on
 * PostgreSQL and MariaDB; on H2 (embedded, where a statement costs no round trip) {@link #CONCURRENT} runs as
 * {@link #OFF}. With {@link #OFF} the service builds no batching machinery:
 * every call sends its own single-row statement. {@link LeaseService#batchingStats()} says whether
 * batching engaged.
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
 * <p>A release never waits for an acquire: it waits at most for the release statements in flight, then
 * goes in the next.
 */
public enum Batching {

    /** Every call is a statement of its own. */
    OFF,
    /** Calls that queue while a statement of their kind is in flight go together in the next. */
    CONCURRENT;

    /** The internals' name of this mode. */
    BatchMode mode() {
        return switch (this) {
            case OFF -> BatchMode.OFF;
            case CONCURRENT -> BatchMode.CONCURRENT;
        };
    }
}
