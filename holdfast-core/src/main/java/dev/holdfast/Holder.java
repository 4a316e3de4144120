package dev.holdfast;

import org.jspecify.annotations.Nullable;

import java.time.Instant;

/**
 * Who holds a lease or an offline lock, as the database recorded it when it was read: the one value
 * for "who holds it" across techniques ({@code LeaseTimeoutException.holder()},
 * {@code AlreadyLockedException.holder()}, {@code Lease.holder()}, {@code HeldLock.holder()}). All
 * times are database time. A holder may have released, renewed or lost its grant since it was read.
 *
 * @param owner      who holds it; null for an offline lock taken without an owner (a lease always has one)
 * @param acquiredAt since when: when this grant or lock began (kept by renewals and extensions)
 * @param expiresAt  until when it holds unless it renews, extends or releases it
 * @param token      a lease grant's fencing token; null for an offline lock, which has none to show
 *                   (its lock id is a capability and is never shown)
 */
public record Holder(
        @Nullable String owner,
        Instant acquiredAt,
        Instant expiresAt,
        @Nullable Long token) {

    /**
     * Creates a holder.
     *
     * @param owner      who holds it; null for an offline lock taken without an owner
     * @param acquiredAt since when; not null
     * @param expiresAt  until when; not null
     * @param token      a lease grant's fencing token; null for an offline lock
     * @throws IllegalArgumentException if {@code acquiredAt} or {@code expiresAt} is null
     */
    public Holder {
        if (acquiredAt == null || expiresAt == null) {
            throw new IllegalArgumentException("acquiredAt and expiresAt must not be null");
        }
    }

    /** One line for messages and logs, e.g. {@code 'server-7' (token 12) since 2026-…Z until 2026-…Z}. */
    @Override
    public String toString() {
        return (owner == null ? "an unnamed owner" : "'" + owner + "'")
                + (token == null ? "" : " (token " + token + ")") + " since " + acquiredAt + " until " + expiresAt;
    }
}
