package dev.holdfast.lease.internal;

import dev.holdfast.DatabaseException;
import org.jspecify.annotations.Nullable;

import java.time.Instant;

/**
 * Routes a release: passed on in memory to a waiting call of the same owner (cohort hand-off), sent
 * in a batch, or sent alone; then wakes this service's oldest polling waiter of the name. A release
 * that matched nothing raises the refusal that says why.
 */
final class Releases {

    private final LeaseCalls calls;
    private final LeaseStore store;
    private final @Nullable CohortHandOffs cohorts;
    private final @Nullable LeaseBatches batches;
    private final LocalPollers pollers;
    private final Refusals refusals;
    private final boolean relaxed;

    Releases(
            LeaseCalls calls,
            LeaseStore store,
            @Nullable CohortHandOffs cohorts,
            @Nullable LeaseBatches batches,
            LocalPollers pollers,
            Refusals refusals,
            boolean relaxed) {
        this.calls = calls;
        this.store = store;
        this.cohorts = cohorts;
        this.batches = batches;
        this.pollers = pollers;
        this.refusals = refusals;
        this.relaxed = relaxed;
    }

    /**
     * Releases the grant of {@code name} to {@code owner}: the one with {@code token}, or any (unlock);
     * kept until {@code heldAtLeastMicros} after its start, if given.
     *
     * @throws NotHeld if it was not held
     */
    void release(String name, String owner, @Nullable Long token, @Nullable Long heldAtLeastMicros) {
        if (cohorts != null) {
            if (token == null) {
                cohorts.closeAll(name, owner); // any grant of the owner: no hand-offs of it any more
            } else {
                CohortRelease decided = cohorts.release(
                        new LeaseRow(name, owner, token, Instant.EPOCH, Instant.EPOCH), heldAtLeastMicros != null);
                if (decided instanceof CohortRelease.HandedOn) {
                    return;
                }
                if (decided instanceof CohortRelease.AlreadyReleased already) {
                    throw Refusals.passedOn(name, owner, token, already.current());
                }
                if (decided instanceof CohortRelease.ToDatabase grant) {
                    Long minimum = heldAtLeastMicros == null ? null : heldAtLeastMicros + grant.extraMicros();
                    // On a DatabaseException the outcome is unknown: the grant stays recorded for a retry.
                    try {
                        releaseInDatabase(name, owner, rowToken(name, owner, grant), minimum);
                    } catch (NotHeld refused) {
                        cohorts.releasedToDatabase(name, owner, grant.token());
                        throw refused;
                    }
                    cohorts.releasedToDatabase(name, owner, grant.token());
                    return;
                }
            }
        }
        releaseInDatabase(name, owner, token, heldAtLeastMicros);
    }

    /** Releases a lease handed to a waiter that was interrupted meanwhile; if that fails, it runs out by its ttl. */
    void releaseQuietly(LeaseRow lease) {
        try {
            release(lease.name(), lease.owner(), lease.token(), null);
        } catch (NotHeld | DatabaseException e) {
            // expired or taken over already; or unreachable: it expires by its ttl
        }
    }

    /** Releases in one statement (and hands off to a waiter); true if the grant was held. */
    boolean releasedInDatabase(String name, String owner, @Nullable Long token, @Nullable Long heldAtLeastMicros) {
        return calls.call("releasing", name, c -> {
            boolean relaxedNow = relaxed && c.getAutoCommit();
            return store.release(c, name, owner, token, relaxedNow, heldAtLeastMicros);
        });
    }

    private void releaseInDatabase(String name, String owner, @Nullable Long token, @Nullable Long heldAtLeastMicros) {
        boolean released;
        if (batches != null && token != null && heldAtLeastMicros == null) {
            released = batches.release(name, owner, token);
            if (!released && store.handsOnAfterBatch()) { // MariaDB: a release of its own hands it on
                released =
                        releasedInDatabase(name, owner, token, null); // not held, or left by the batch for its waiter
            }
        } else {
            released = releasedInDatabase(name, owner, token, heldAtLeastMicros);
        }
        if (!released) {
            throw refusals.notHeld("release", name, owner, token);
        }
        pollers.wakeOldest(name);
    }

    /**
     * The row's token of a grant to release: after a reservation with an unknown outcome, the
     * reserved one if the row still holds the grant (same owner and {@code acquiredAt}) with it.
     */
    private long rowToken(String name, String owner, CohortRelease.ToDatabase grant) {
        if (grant.unsureTokens() == 0) {
            return grant.token();
        }
        long reserved = grant.token() + grant.unsureTokens();
        return calls.call("reading", name, c -> store.read(c, name))
                        .filter(row -> row.owner().equals(owner)
                                && row.token() == reserved
                                && row.acquiredAt().equals(grant.acquiredAt()))
                        .isPresent()
                ? reserved
                : grant.token();
    }
}
