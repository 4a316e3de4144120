package dev.holdfast.lease;

import dev.holdfast.lease.internal.Grants;

/** How a grant reached the call that asked for it (see {@link LeaseService.Builder#onGrant}). */
public enum GrantPath {
    /** The caller's own statement made the grant: a {@code tryAcquire}, or an attempt of a waiting {@code acquire}. */
    OWN_STATEMENT,
    /** A release handed the lease to this waiting caller and notified it (PostgreSQL): no statement of the caller's own. */
    HANDED_OFF,
    /** A holder of the same service and owner passed it on in memory ({@link LeaseService.Builder#cohortHandOffs}). */
    PASSED_IN_MEMORY;

    static GrantPath of(Grants.Path path) {
        return switch (path) {
            case ACQUIRED, QUEUED_ATTEMPT -> OWN_STATEMENT;
            case HANDED_OFF -> HANDED_OFF;
            case PASSED_IN_MEMORY -> PASSED_IN_MEMORY;
        };
    }
}
