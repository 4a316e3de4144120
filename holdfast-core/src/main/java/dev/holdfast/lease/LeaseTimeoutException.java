package dev.holdfast.lease;

import dev.holdfast.Holder;
import dev.holdfast.lease.internal.WaitTimedOut;
import org.jspecify.annotations.Nullable;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * {@link Leases#acquire} waited its whole bound and the lease was not granted; nothing is held. It
 * says what the caller saw when it gave up, read once after the bound ran out: who held the lease
 * ({@link #holder()}: empty if it was free at that instant, as when the lease went to a waiter queued
 * earlier, or expired just then) and how many live waiters had queued before the caller
 * ({@link #waitersAhead()}); or why that is unknown ({@link #holderUnknownBecause()}). It is a
 * snapshot: the holder may have released or renewed since. The message ends with it.
 */
public class LeaseTimeoutException extends LeaseException {

    /** The bound that ran out. */
    private final Duration maxWait;
    /** Who held the lease when the caller gave up; null if it was free or that is unknown. */
    private final @Nullable Holder holder;
    /** How many live waiters had queued before the caller; -1 if unknown. */
    private final int waitersAhead;
    /** When (database time) the holder and waiters were read; null if unknown. */
    private final @Nullable Instant seenAt;
    /** Why the holder and the waiters ahead are unknown; null when they are known. */
    private final @Nullable String unknownBecause;

    /**
     * For implementations of {@link Leases} that do not look: {@code acquire} of {@code name} for
     * {@code owner} waited {@code maxWait} in {@code attempts} attempts; the holder is unknown.
     *
     * @param name     the lease name
     * @param owner    who asked for the lease
     * @param maxWait  the bound that ran out
     * @param attempts how many times the call tried to acquire the lease (for the message)
     */
    public LeaseTimeoutException(String name, String owner, Duration maxWait, int attempts) {
        this(name, owner, maxWait, attempts, null, -1, null, "this Leases implementation does not tell");
    }

    /**
     * For implementations of {@link Leases}: as above, and when the caller gave up (database time
     * {@code seenAt}) the lease was held by {@code holder} (null: free) with {@code waitersAhead}
     * live waiters queued before the caller.
     *
     * @param name         the lease name
     * @param owner        who asked for the lease
     * @param maxWait      the bound that ran out
     * @param attempts     how many times the call tried to acquire the lease (for the message)
     * @param holder       who held the lease when the caller gave up, or null if it was free
     * @param waitersAhead how many live waiters had queued before the caller, 0 or more
     * @param seenAt       when the holder and the waiters were read (database time); not null
     * @throws IllegalArgumentException if {@code waitersAhead} is negative or {@code seenAt} null
     */
    public LeaseTimeoutException(
            String name,
            String owner,
            Duration maxWait,
            int attempts,
            @Nullable Holder holder,
            int waitersAhead,
            Instant seenAt) {
        this(name, owner, maxWait, attempts, holder, checked(waitersAhead, seenAt), seenAt, null);
    }

    /**
     * For implementations of {@link Leases}: as above, but looking failed, for the reason
     * {@code unknownBecause}.
     *
     * @param name           the lease name
     * @param owner          who asked for the lease
     * @param maxWait        the bound that ran out
     * @param attempts       how many times the call tried to acquire the lease (for the message)
     * @param unknownBecause why the holder and the waiters ahead are unknown; not blank
     * @throws IllegalArgumentException if {@code unknownBecause} is null or blank
     */
    public LeaseTimeoutException(String name, String owner, Duration maxWait, int attempts, String unknownBecause) {
        this(name, owner, maxWait, attempts, null, -1, null, reason(unknownBecause));
    }

    private LeaseTimeoutException(
            String name,
            String owner,
            Duration maxWait,
            int attempts,
            @Nullable Holder holder,
            int waitersAhead,
            @Nullable Instant seenAt,
            @Nullable String unknownBecause) {
        super(
                name,
                "Lease '" + name + "' was not granted to '" + owner + "' within " + maxWait.toMillis()
                        + " ms (" + attempts + " attempts); nothing is held; "
                        + seen(holder, waitersAhead, seenAt, unknownBecause),
                null);
        this.maxWait = maxWait;
        this.holder = holder;
        this.waitersAhead = waitersAhead;
        this.seenAt = seenAt;
        this.unknownBecause = unknownBecause;
    }

    /** {@link LeaseService}'s timeout, with what its call saw. */
    static LeaseTimeoutException of(String name, String owner, Duration maxWait, WaitTimedOut timedOut) {
        WaitTimedOut.Seen seen = timedOut.seen();
        if (seen.unknownBecause() != null || seen.at() == null) {
            return new LeaseTimeoutException(
                    name,
                    owner,
                    maxWait,
                    timedOut.attempts(),
                    seen.unknownBecause() != null ? seen.unknownBecause() : "not looked at");
        }
        Holder holder = seen.holder() == null ? null : Lease.of(seen.holder()).holder();
        return new LeaseTimeoutException(
                name, owner, maxWait, timedOut.attempts(), holder, seen.waitersAhead(), seen.at());
    }

    private static int checked(int waitersAhead, @Nullable Instant seenAt) {
        if (waitersAhead < 0 || seenAt == null) {
            throw new IllegalArgumentException("waitersAhead must be >= 0 and seenAt not null");
        }
        return waitersAhead;
    }

    private static String reason(@Nullable String unknownBecause) {
        if (unknownBecause == null || unknownBecause.isBlank()) {
            throw new IllegalArgumentException("unknownBecause must not be null or blank");
        }
        return unknownBecause;
    }

    private static String seen(
            @Nullable Holder holder, int ahead, @Nullable Instant at, @Nullable String unknownBecause) {
        if (unknownBecause != null) {
            return "holder unknown: " + unknownBecause;
        }
        String waiters = ahead + (ahead == 1 ? " waiter was" : " waiters were") + " queued ahead";
        return (holder == null ? "free when looked at " + at : "held by " + holder + " (seen at " + at + ")") + "; "
                + waiters;
    }

    /** {@return the bound that ran out} */
    public Duration maxWait() {
        return maxWait;
    }

    /**
     * {@return who held the lease when the caller gave up (owner, since, until, token); empty if it
     * was free at that instant, or if that is unknown ({@link #holderUnknownBecause()} then says why)}
     */
    public Optional<Holder> holder() {
        return Optional.ofNullable(holder);
    }

    /**
     * {@return how many live waiters had queued before the caller when it gave up (every live one if
     * the call had no place in the queue, as with a zero wait); empty if unknown}
     */
    public OptionalInt waitersAhead() {
        return unknownBecause == null ? OptionalInt.of(waitersAhead) : OptionalInt.empty();
    }

    /** {@return when (database time) the holder and waiters were read; empty if unknown} */
    public Optional<Instant> seenAt() {
        return Optional.ofNullable(seenAt);
    }

    /** {@return whether the holder (or that the lease was free) and the waiters ahead are known} */
    public boolean holderKnown() {
        return unknownBecause == null;
    }

    /** {@return why the holder and the waiters ahead are unknown; empty when they are known} */
    public Optional<String> holderUnknownBecause() {
        return Optional.ofNullable(unknownBecause);
    }
}
