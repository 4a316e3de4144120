package dev.holdfast.lease;

import dev.holdfast.Holder;
import dev.holdfast.lease.internal.LeaseArguments;
import dev.holdfast.lease.internal.LeaseRow;
import org.jspecify.annotations.Nullable;

import java.time.Instant;

/**
 * One grant of a lease, as the database recorded it. All times are database time.
 *
 * @param name       the lease name
 * @param owner      who holds it
 * @param token      the fencing token: strictly greater than every earlier grant of this name; a
 *                   renewal of a live lease by its owner keeps it. On PostgreSQL it is at least
 *                   {@code (timeline - 1) << 40}, so it stays greater after a failover to a standby,
 *                   even than grants the standby never received
 * @param acquiredAt when this grant began (kept by renewals)
 * @param expiresAt  when it ends unless renewed; a released lease has {@code expiresAt == acquiredAt}
 */
public record Lease(String name, String owner, long token, Instant acquiredAt, Instant expiresAt) {

    /**
     * {@return whether this row records a release or a force-release, rather than a live grant or one
     * that ran out}
     */
    public boolean isReleased() {
        return expiresAt.equals(acquiredAt);
    }

    /**
     * {@return who holds this grant, since and until when, with its token} The vocabulary shared with
     * offline locks.
     */
    public Holder holder() {
        return new Holder(owner, acquiredAt, expiresAt, token);
    }

    /** {@code lease}, if it and its name and owner are valid; else an {@link IllegalArgumentException}. */
    static Lease checked(@Nullable Lease lease) {
        if (lease == null) {
            throw new IllegalArgumentException("lease must not be null");
        }
        LeaseArguments.checkNameAndOwner(lease.name(), lease.owner());
        return lease;
    }

    /** As the internal package sees it. */
    LeaseRow row() {
        return new LeaseRow(name, owner, token, acquiredAt, expiresAt);
    }

    /** A row the internal package read or wrote. */
    static Lease of(LeaseRow row) {
        return new Lease(row.name(), row.owner(), row.token(), row.acquiredAt(), row.expiresAt());
    }
}
