package dev.holdfast.pessimistic.offline;

import org.jspecify.annotations.Nullable;

import java.time.Instant;
import java.util.Optional;

/**
 * The lock id was issued, and its lock has ended: this says how, by whom, when (database time), and
 * who holds the resource now, so a page can say "kim broke your lock at 14:05" instead of listing
 * every way a lock can be lost. Only the latest ended lock of each resource is remembered; an older
 * or purged one is a plain {@link LockNotHeldException}.
 */
public class LockEndedException extends LockNotHeldException {

    /** How a lock ended. */
    public enum Reason {
        /** Its owner released it. */
        RELEASED,
        /** An operator broke it ({@link JdbcLockManager#forceRelease}). */
        BROKEN,
        /** Its owner re-acquired the resource ({@link LockManager#reacquire}): a newer id replaced this one. */
        REPLACED,
        /** It expired, and someone took the resource over. */
        EXPIRED
    }

    /** The type of the resource whose lock ended. */
    private final String type;
    /** The id of the resource whose lock ended. */
    private final String id;
    /** How the lock ended. */
    private final Reason reason;
    /** Who released, broke or replaced the lock; null for an expiry or an unnamed operator. */
    private final @Nullable String endedBy;
    /** When the lock ended (database time). */
    private final Instant endedAt;
    /** The live lock on the resource now; null if nobody holds it. */
    private final @Nullable HeldLock holder;

    /**
     * An exception for the ended lock on {@code type}/{@code id}; the message says how, by whom and
     * when it ended and who holds the resource now.
     *
     * @param type    the type of the resource whose lock ended
     * @param id      the id of the resource whose lock ended
     * @param reason  how the lock ended
     * @param endedBy who ended it: the owner for {@link Reason#RELEASED} and {@link Reason#REPLACED}, the
     *                operator for {@link Reason#BROKEN} (null when the operator was not named), null for
     *                {@link Reason#EXPIRED}
     * @param endedAt when it was released, broken or replaced, or when it expired
     * @param holder  the live lock on the resource now, if any
     */
    public LockEndedException(
            String type,
            String id,
            Reason reason,
            @Nullable String endedBy,
            Instant endedAt,
            @Nullable HeldLock holder) {
        super(message(type, id, reason, endedBy, endedAt, holder));
        this.type = type;
        this.id = id;
        this.reason = reason;
        this.endedBy = endedBy;
        this.endedAt = endedAt;
        this.holder = holder;
    }

    /** {@return the type of the resource whose lock ended} */
    public String type() {
        return type;
    }

    /** {@return the id of the resource whose lock ended} */
    public String id() {
        return id;
    }

    /** {@return how the lock ended} */
    public Reason reason() {
        return reason;
    }

    /** {@return who released, broke or replaced the lock; empty for an expiry or an unnamed operator} */
    public Optional<String> endedBy() {
        return Optional.ofNullable(endedBy);
    }

    /** {@return when the lock ended (database time)} */
    public Instant endedAt() {
        return endedAt;
    }

    /** {@return who holds the resource now, since and until when; empty if nobody does} */
    public Optional<HeldLock> holder() {
        return Optional.ofNullable(holder);
    }

    private static String message(
            String type, String id, Reason reason, @Nullable String by, Instant at, @Nullable HeldLock holder) {
        String what = "The lock on " + type + " " + id + " ";
        String how = switch (reason) {
            case RELEASED -> "was released" + (by == null ? "" : " by " + by) + " at " + at;
            case BROKEN -> "was broken" + (by == null ? " by an operator" : " by " + by) + " at " + at;
            case REPLACED -> "was replaced at " + at + " by a newer lock of " + (by == null ? "its owner" : by);
            case EXPIRED -> "expired at " + at;
        };
        String now = holder == null
                ? "; nobody holds it now"
                : "; now held" + (holder.owner() == null ? "" : " by " + holder.owner()) + " since "
                        + holder.acquiredAt() + " until " + holder.expiresAt();
        return what + how + now;
    }
}
