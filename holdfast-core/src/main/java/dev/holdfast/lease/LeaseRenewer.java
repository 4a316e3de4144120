package dev.holdfast.lease;

import java.time.Duration;
import java.util.Optional;

/**
 * What a {@link LeaseGuard} needs of the leases it keeps alive: a renewal and a release. It lets
 * any {@link Leases} implementation offer {@link Leases#keepAlive} (the interface's default
 * renews through {@link Leases#renew}); {@link LeaseGuard#start} guards a lease with one.
 */
public interface LeaseRenewer {

    /**
     * Extends {@code lease} (same name, owner and token) to {@code ttl} from the database's now.
     * Called once by {@link LeaseGuard#start} on its caller's thread, then by the guard on a background
     * thread, at most one call per guard at a time.
     *
     * @param lease the guarded grant (its name, owner and token)
     * @param ttl   the guard's TTL, the same at every renewal: at least 3 ms
     * @param bound how long the renewal may take before it should give up (a hint: the guard's own
     *              deadline does not depend on it)
     * @return the lease with its new expiry, or empty if it is no longer held and why is not known
     * @throws LeaseNotHeldException if it is no longer held (expired, taken over, broken, released)
     * @throws RuntimeException      any other failure: the guard tries again until its deadline
     */
    Optional<Lease> renew(Lease lease, Duration ttl, Duration bound);

    /**
     * Releases {@code lease}, as {@link Leases#release(Lease)}. Called by {@link LeaseGuard#close()};
     * also, best effort, for a guard that found the lease lost, in case a late renewal committed
     * (there a {@link LeaseNotHeldException} or a database failure is ignored).
     *
     * @param lease the guarded grant (name, owner and token must match)
     * @throws LeaseNotHeldException if it was not held any more
     */
    void release(Lease lease);
}
