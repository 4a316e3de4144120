package dev.holdfast.lease;

import dev.holdfast.DatabaseException;
import org.jspecify.annotations.Nullable;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Distributed leases with fencing tokens: a named lease is held by one owner at a time for a time
 * to live, and every grant carries a token greater than every earlier grant's of that name, so a
 * write fenced by the token ({@link FencedUpdate}) is refused once a newer holder has written.
 *
 * <p>The contract every implementation keeps (the abstract suite {@code LeasesContract} of
 * {@code holdfast-testing} checks it on every database):
 * <ul>
 *   <li>expiry is decided by one clock for all holders (the database's, in {@link LeaseService});</li>
 *   <li>the <em>acquire</em> methods ({@link #tryAcquire}, {@link #acquire}) are exclusive per call:
 *       a live grant refuses every caller, even its own owner; {@link #tryAcquireOrRenew} re-enters,
 *       and so does the seed-compatible pair {@link #tryLock} / {@link #unlock};</li>
 *   <li>a renewal keeps the token; a new grant adds at least one; tokens never go back;</li>
 *   <li>a release or renewal of a grant that ran out fails with {@link LeaseExpiredException}, of a
 *       grant that is not the caller's (released, broken, taken over) with {@link LeaseNotHeldException};</li>
 *   <li>bad arguments (blank, over-long or control characters in a name or owner; a TTL under 1 ms or
 *       over 366 days; a negative wait) raise {@link IllegalArgumentException} before anything is
 *       written; a failure of the store raises {@link DatabaseException}.</li>
 * </ul>
 *
 * <p>Implementations are thread-safe. Decorators (metrics, tracing) implement this interface and
 * delegate.
 */
public interface Leases extends AutoCloseable {

    /**
     * Acquires {@code name} for {@code owner} for {@code ttl}, without waiting. Granted only if nobody
     * holds it: never granted, released, or the last grant expired. A live grant refuses, <em>even one
     * of {@code owner}</em>: two concurrent calls with the same owner (two runs of one job on one
     * server) never both hold the lease. Extend a grant through its handle ({@link #renew},
     * {@link #keepAlive}); the re-entrant form is {@link #tryAcquireOrRenew}.
     *
     * @param name  the lease name: 1 to {@value LeaseService#MAX_NAME_LENGTH} characters, not blank,
     *              without control characters or unpaired surrogates
     * @param owner who asks for it, by the same rules as {@code name}
     * @param ttl   how long the grant lasts, from the database's now: 1 ms to 366 days
     * @return the grant, or empty if the lease is live
     * @throws IllegalArgumentException for a bad name, owner or ttl (nothing is written)
     * @throws DatabaseException        if the store failed (the grant may or may not exist)
     */
    Optional<Lease> tryAcquire(String name, String owner, Duration ttl);

    /**
     * The re-entrant acquire: like {@link #tryAcquire}, and also granted if {@code owner} holds the
     * live lease already, which is then extended to now + ttl and keeps its token. Two callers using
     * the same owner share one lease: use it only where the owner names one caller (for instance a
     * per-call id), or where sharing is meant.
     *
     * @param name  the lease name: 1 to {@value LeaseService#MAX_NAME_LENGTH} characters, not blank,
     *              without control characters or unpaired surrogates
     * @param owner who asks for it, by the same rules as {@code name}
     * @param ttl   how long the grant lasts, from the database's now: 1 ms to 366 days
     * @return the grant (new, or the owner's own, extended), or empty if another owner holds it
     * @throws IllegalArgumentException for a bad name, owner or ttl (nothing is written)
     * @throws DatabaseException        if the store failed
     */
    Optional<Lease> tryAcquireOrRenew(String name, String owner, Duration ttl);

    /**
     * The seed-compatible form of {@link #tryAcquireOrRenew} ({@code dist_lock}'s
     * {@code tryLock(name, owner, duration)}): re-entrant, and true if {@code owner} holds the lease
     * now. {@link #find} returns the grant.
     *
     * @param name  the lease name: 1 to {@value LeaseService#MAX_NAME_LENGTH} characters, not blank,
     *              without control characters or unpaired surrogates
     * @param owner who asks for it, by the same rules as {@code name}
     * @param ttl   how long the grant lasts, from the database's now: 1 ms to 366 days
     * @return true if {@code owner} holds the lease now (granted or extended), false if another owner does
     * @throws IllegalArgumentException for a bad name, owner or ttl (nothing is written)
     * @throws DatabaseException        if the store failed
     */
    default boolean tryLock(String name, String owner, Duration ttl) {
        return tryAcquireOrRenew(name, owner, ttl).isPresent();
    }

    /**
     * Acquires {@code name}, waiting at most {@code maxWait} (interruptibly) for the holder to release
     * it or for its grant to expire. Exclusive like {@link #tryAcquire}: a live grant, even one of
     * {@code owner}, is waited for.
     *
     * @param name    the lease name: 1 to {@value LeaseService#MAX_NAME_LENGTH} characters, not blank,
     *                without control characters or unpaired surrogates
     * @param owner   who asks for it, by the same rules as {@code name}
     * @param ttl     how long the grant lasts, from the database's now: 1 ms to 366 days
     * @param maxWait how long to wait at most, 0 to 366 days; zero tries once
     * @return the grant, as {@link #tryAcquire}
     * @throws LeaseTimeoutException if the lease was not granted when {@code maxWait} ran out: it names
     *                               who held it then and how many waiters were queued ahead of the
     *                               caller, or why that is unknown (an implementation that does not
     *                               look says so)
     * @throws InterruptedException  if the thread was interrupted while waiting (nothing is held)
     * @throws DatabaseException     if the store failed
     */
    Lease acquire(String name, String owner, Duration ttl, Duration maxWait) throws InterruptedException;

    /**
     * Extends a live grant to now + {@code ttl}, keeping its token.
     *
     * @param lease the caller's grant, as an acquire or an earlier renewal returned it (name, owner
     *              and token must match)
     * @param ttl   the new time to live, from the database's now: 1 ms to 366 days
     * @return the grant with its new expiry
     * @throws LeaseExpiredException if it had already expired (another owner may hold it now)
     * @throws LeaseNotHeldException if it was released, or never this caller's
     */
    Lease renew(Lease lease, Duration ttl);

    /**
     * Releases this grant (name, owner and token must match); the token keeps counting.
     *
     * @param lease the caller's grant, as an acquire or a renewal returned it
     * @throws LeaseExpiredException if the grant had run out first: the caller's critical section may
     *                               have overlapped another holder's
     * @throws LeaseNotHeldException if it was already released, force-released, or not this caller's
     */
    void release(Lease lease);

    /**
     * Releases this grant, but not before {@code acquiredAt + heldAtLeast}: if that moment is still
     * ahead, the lease stays live until then, else it is released now (ShedLock's
     * {@code lockAtLeastFor}).
     *
     * @param lease       the caller's grant, as an acquire or a renewal returned it
     * @param heldAtLeast the shortest time the lease is held, counted from {@link Lease#acquiredAt()}:
     *                    0 to 366 days
     * @throws LeaseExpiredException if the grant had run out first
     * @throws LeaseNotHeldException if it was released already or is not this caller's
     */
    void release(Lease lease, Duration heldAtLeast);

    /**
     * Releases {@code name} if {@code owner} holds it, whatever the token: the seed-compatible release,
     * the pair of {@link #tryLock}.
     *
     * @param name  the lease name
     * @param owner the owner whose grant is released
     * @throws LeaseExpiredException if the owner's grant had run out first
     * @throws LeaseNotHeldException if another owner holds it, or it is not held
     */
    void unlock(String name, String owner);

    /**
     * Keeps {@code lease} alive for the work of the calling thread: renews it now, then every
     * {@code ttl}/3 in the background. If a renewal finds the lease expired or taken over, or renewals
     * fail until the last confirmed grant has run out, the guard becomes invalid at once, calls
     * {@code onLost} and interrupts the calling thread. Close the guard to stop renewing and release
     * the lease.
     *
     * <p>The default renews through {@link #renew} and releases through {@link #release(Lease)}, on
     * threads shared by all such guards ({@link LeaseGuard#start}); an implementation overrides it to
     * bound each renewal or to use threads of its own.
     *
     * @param lease  the caller's grant, as an acquire or a renewal returned it
     * @param ttl    each renewal's TTL, 3 ms to 366 days; renewals run every ttl/3
     * @param onLost called once, on a background thread, when the guard finds the lease lost while it
     *               is open; may be null. Not called when {@link LeaseGuard#close()} itself finds the
     *               deadline passed (close then throws the {@link LeaseLostException})
     * @return the open guard, holding the lease as its first renewal extended it
     * @throws LeaseExpiredException if the lease had already expired
     * @throws LeaseNotHeldException if it was not held
     */
    default LeaseGuard keepAlive(Lease lease, Duration ttl, @Nullable Consumer<LeaseLostException> onLost) {
        Leases leases = this;
        return LeaseGuard.start(
                new LeaseRenewer() {
                    @Override
                    public Optional<Lease> renew(Lease held, Duration renewTtl, Duration bound) {
                        return Optional.of(leases.renew(held, renewTtl));
                    }

                    @Override
                    public void release(Lease held) {
                        leases.release(held);
                    }
                },
                lease,
                ttl,
                onLost);
    }

    /** {@return the leases live now, ordered by name; empty if there are none} */
    List<Lease> list();

    /**
     * {@return the last grant of {@code name}, live or not (a released one has
     * {@link Lease#isReleased()}); empty if the store has no row of that name}
     *
     * @param name the lease name
     */
    Optional<Lease> find(String name);

    /**
     * Expires {@code name} whoever holds it (an operator breaking a stuck lease). The holder learns it
     * at its next renewal or release ({@link LeaseNotHeldException}); its fenced writes are refused
     * once the next holder writes. The token is kept, so the next grant's is greater.
     *
     * @param name the lease name
     * @return true if a live lease was expired
     */
    boolean forceRelease(String name);

    /**
     * {@link #forceRelease(String)}, naming the operator: the holder's next renewal or release is told
     * who broke the lease and when ({@link LeaseNotHeldException#reason()} {@code BROKEN},
     * {@link LeaseNotHeldException#brokenBy()}).
     *
     * @param name the lease name
     * @param by   the operator, as the holder will read it; the rules of a lease name apply
     * @return true if a live lease was expired
     */
    boolean forceRelease(String name, String by);

    /** Stops background work; leases stay as they are. */
    @Override
    void close();
}
