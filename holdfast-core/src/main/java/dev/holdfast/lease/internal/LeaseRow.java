package dev.holdfast.lease.internal;

import java.time.Instant;

/**
 * One row of the lease table as a statement read or wrote it; the public package shows it as a
 * {@code Lease}. All times are database time.
 *
 * @param token      the fencing token of this grant
 * @param acquiredAt when this grant began (kept by renewals)
 * @param expiresAt  when it ends unless renewed; equal to {@code acquiredAt} once released
 */
public record LeaseRow(String name, String owner, long token, Instant acquiredAt, Instant expiresAt) {

    /** Whether this row records a release (or a force-release) rather than a grant that ran out. */
    public boolean isReleased() {
        return expiresAt.equals(acquiredAt);
    }
}
