package dev.holdfast.lease.internal;

import java.time.Instant;

/** Outcome of a release of a lease this service may have passed on. */
sealed interface CohortRelease permits CohortRelease.HandedOn, CohortRelease.AlreadyReleased, CohortRelease.ToDatabase {

    /** Passed to a local waiter: nothing to do in the database. */
    record HandedOn() implements CohortRelease {}

    /** The lease was passed on earlier (a second release); {@code current} is the local holder's. */
    record AlreadyReleased(LeaseRow current) implements CohortRelease {}

    /**
     * Release the database grant: {@code token} is the row's, {@code extraMicros} how much later
     * than the grant the releasing holder took it (added to a minimum hold). {@code unsureTokens}
     * is not 0 if a reservation of that many tokens failed with an unknown outcome: the row's token
     * is then {@code token} or {@code token + unsureTokens} (a row of the owner with the grant's
     * {@code acquiredAt} tells which). Then call {@link CohortHandOffs#releasedToDatabase} unless the database
     * could not be reached.
     */
    record ToDatabase(long token, long extraMicros, long unsureTokens, Instant acquiredAt) implements CohortRelease {}
}
