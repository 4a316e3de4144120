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

    private final Duration maxWait;
    private final @Nullable Holder holder;
    private final int waitersAhead;
    private final @Nullable Instant seenAt;
    private final @Nullable String unknownBecause;

    /**
     * For implementations of {@link Leases} that do not look: {@code acquire} of {@code name} for
     * {@code owner} waited {@code maxWait} in {@code attempts} attempts; the holder is unknown.
     */
    public LeaseTimeoutException(String name, String owner, Duration maxWait, int attempts) {
        this(name, owner, maxWait, attempts, null, -1, null, "this Leases implementation does not tell");
    }

    /**
     * For implementations of {@link Leases}: as above, and when the caller gave up (database time
     * {@code seenAt}) the lease was held by {@code holder} (null: free) with {@code waitersAhead}
     * live waiters queued before the caller.
     *
     * @throws IllegalArgumentException if {@code waitersAhead} is negative or {@code seenAt} null
     */
    public LeaseTimeoutException(String name, String owner, Duration maxWait, int attempts, @Nullable Holder holder,
                                 int waitersAhead, Instant seenAt) {
        this(name, owner, maxWait, attempts, holder, checked(waitersAhead, seenAt), seenAt, null);
    }

    /**
     * For implementations of {@link Leases}: as above, but looking failed, for the reason
     * {@code unknownBecause}.
     *
     * @throws IllegalArgumentException if {@code unknownBecause} is null or blank
     */
    public LeaseTimeoutException(String name, String owner, Duration maxWait, int attempts, String unknownBecause) {
        this(name, owner, maxWait, attempts, null, -1, null, reason(unknownBecause));
    }

    private LeaseTimeoutException(String name, String owner, Duration maxWait, int attempts, @Nullable Holder holder,
                                  int waitersAhead, @Nullable Instant seenAt, @Nullable String unknownBecause) {
        super(name, "Lease '" + name + "' was not granted to '" + owner + "' within " + maxWait.toMillis()
                + " ms (" + attempts + " attempts); nothing is held; "
                + seen(holder, waitersAhead, seenAt, unknownBecause), null);
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
            return new LeaseTimeoutException(name, owner, maxWait, timedOut.attempts(),
                    seen.unknownBecause() != null ? seen.unknownBecause() : "not looked at");
        }
        Holder holder = seen.holder() == null ? null : Lease.of(seen.holder()).holder();
        return new LeaseTimeoutException(name, owner, maxWait, timedOut.attempts(), holder, seen.waitersAhead(), seen.at());
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

    private static String seen(@Nullable Holder holder, int ahead, @Nullable Instant at, @Nullable String unknownBecause) {
        if (unknownBecause != null) {
            return "holder unknown: " + unknownBecause;
        }
        String waiters = ahead + (ahead == 1 ? " waiter was" : " waiters were") + " queued ahead";
        return (holder == null ? "free when looked at " + at : "held by " + holder + " (seen at " + at + ")") + "; "
                + waiters;
    }

    /** The bound that ran out. */
    public Duration maxWait() {
        return maxWait;
    }

    /**
     * Who held the lease when the caller gave up (owner, since, until, token); empty if it was free
     * at that instant, or if that is unknown ({@link #holderUnknownBecause()} then says why).
     */
    public Optional<Holder> holder() {
        return Optional.ofNullable(holder);
    }

    /**
     * How many live waiters had queued before the caller when it gave up (every live one if the call
     * had no place in the queue, as with a zero wait); empty if unknown.
     */
    public OptionalInt waitersAhead() {
        return unknownBecause == null ? OptionalInt.of(waitersAhead) : OptionalInt.empty();
    }

    /** When (database time) the holder and waiters were read; empty if unknown. */
    public Optional<Instant> seenAt() {
        return Optional.ofNullable(seenAt);
    }

    /** Whether the holder (or that the lease was free) and the waiters ahead are known. */
    public boolean holderKnown() {
        return unknownBecause == null;
    }

    /** Why the holder and the waiters ahead are unknown; empty when they are known. */
    public Optional<String> holderUnknownBecause() {
        return Optional.ofNullable(unknownBecause);
    }
}
