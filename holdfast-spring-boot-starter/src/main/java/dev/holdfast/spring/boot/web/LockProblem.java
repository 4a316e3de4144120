package dev.holdfast.spring.boot.web;

import dev.holdfast.pessimistic.offline.AlreadyLockedException;
import dev.holdfast.pessimistic.offline.ForeignLockException;
import dev.holdfast.pessimistic.offline.LockEndedException;
import dev.holdfast.pessimistic.offline.LockExpiredException;
import dev.holdfast.pessimistic.offline.LockNotHeldException;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;

import java.time.Instant;

/**
 * What went wrong with an offline lock, for a page or, as an {@link HoldfastProblem}, a problem-detail
 * response. Never contains a lock id.
 *
 * @param status    409 for lock conflicts and lost locks, 400 for a malformed or missing lock id
 * @param code      a stable code: {@code already-locked}, {@code lock-expired}, {@code lock-released},
 *                  {@code lock-broken}, {@code lock-replaced}, {@code lock-taken-over}, {@code other-owner},
 *                  {@code other-resource}, {@code no-lock} (an id whose end is unknown), {@code bad-lock-id}
 * @param title     a short headline
 * @param detail    what happened and that nothing was changed
 * @param owner     who holds the lock now: for {@code already-locked}, and for an ended lock whose resource
 *                  someone holds again (null if unknown or nobody)
 * @param expiresAt until when that holder holds it, or when the lock expired ({@code lock-expired}); else null
 * @param endedBy   who ended the caller's lock ({@code lock-released}, {@code lock-broken},
 *                  {@code lock-replaced}); else null
 * @param endedAt   when the caller's lock ended ({@code lock-released}, {@code lock-broken},
 *                  {@code lock-replaced}, {@code lock-taken-over}: when it expired); else null
 */
public record LockProblem(
        int status,
        String code,
        String title,
        String detail,
        @Nullable String owner,
        @Nullable Instant expiresAt,
        @Nullable String endedBy,
        @Nullable Instant endedAt)
        implements HoldfastProblem {

    /**
     * The problem for a refused offline lock call.
     *
     * @param e the refusal: the lock is held by someone else
     * @return a 409 {@code already-locked} problem with the holder (if known) and until when they hold the lock
     */
    public static LockProblem of(AlreadyLockedException e) {
        String who = e.owner().orElse("someone else");
        return new LockProblem(
                HttpStatus.CONFLICT.value(),
                "already-locked",
                "Being edited by " + who,
                who + " is editing this " + readable(e.type()) + " (" + e.id() + ") and holds its lock. "
                        + "You can edit it when they save, cancel, or their lock expires.",
                e.owner().orElse(null),
                e.expiresAt(),
                null,
                null);
    }

    /**
     * The problem for a lock id that authorizes nothing.
     *
     * @param e why the lock id authorizes nothing
     * @return a 409 problem: for a {@link LockEndedException} as {@link #of(LockEndedException)} makes it, else
     *         {@code lock-expired}, {@code other-owner}, {@code other-resource} or {@code no-lock}
     */
    public static LockProblem of(LockNotHeldException e) {
        if (e instanceof LockEndedException ended) {
            return of(ended);
        }
        if (e instanceof LockExpiredException x) {
            return new LockProblem(
                    409,
                    "lock-expired",
                    "Your edit lock expired",
                    "Your lock on this " + readable(x.type()) + " (" + x.id() + ") expired, so someone else may have "
                            + "changed it since. Nothing was saved. Open the page again to edit the current state.",
                    null,
                    x.expiredAt(),
                    null,
                    null);
        }
        if (e instanceof ForeignLockException f) {
            return f.reason() == ForeignLockException.Reason.OTHER_OWNER
                    ? new LockProblem(
                            409,
                            "other-owner",
                            "Not your lock",
                            "The form carried a lock that belongs to someone else. Nothing was saved.",
                            null,
                            null,
                            null,
                            null)
                    : new LockProblem(
                            409,
                            "other-resource",
                            "Lock of something else",
                            "The form carried a lock for something other than what it tried to change. Nothing was saved.",
                            null,
                            null,
                            null,
                            null);
        }
        return new LockProblem(
                409,
                "no-lock",
                "You no longer hold the edit lock",
                "The lock this form carried is unknown: it was never issued, or it ended so long ago that how "
                        + "is no longer known. Nothing was saved. Open the page again to edit the current state.",
                null,
                null,
                null,
                null);
    }

    /**
     * The problem for a lock id whose lock ended: how, by whom, when, and who holds the resource now.
     *
     * @param e how the caller's lock ended
     * @return a 409 problem: {@code lock-released}, {@code lock-broken}, {@code lock-replaced} or
     *         {@code lock-taken-over}, with the resource's current holder if there is one
     */
    public static LockProblem of(LockEndedException e) {
        String what = "this " + readable(e.type()) + " (" + e.id() + ")";
        String holder = e.holder()
                .map(h -> " " + (h.owner() == null ? "Someone" : h.owner()) + " holds its lock now, until "
                        + h.expiresAt() + ".")
                .orElse("");
        String by = e.endedBy().orElse(null);
        String after = " Nothing was saved." + holder + " Open the page again to edit the current state.";
        LockProblem problem = switch (e.reason()) {
            case RELEASED ->
                new LockProblem(
                        409,
                        "lock-released",
                        "Your edit lock was released",
                        "Your lock on " + what + " was released" + (by == null ? "" : " by " + by) + " at "
                                + e.endedAt() + "." + after,
                        null,
                        null,
                        by,
                        e.endedAt());
            case BROKEN ->
                new LockProblem(
                        409,
                        "lock-broken",
                        "Your edit lock was broken",
                        (by == null ? "An administrator" : by) + " broke your lock on " + what + " at " + e.endedAt()
                                + "." + after,
                        null,
                        null,
                        by,
                        e.endedAt());
            case REPLACED ->
                new LockProblem(
                        409,
                        "lock-replaced",
                        "You are editing this in another tab",
                        "You opened " + what + " for editing again at " + e.endedAt() + " (another tab, or a reload);"
                                + " that page holds the lock now, so this one can no longer save. Nothing was saved.",
                        null,
                        null,
                        by,
                        e.endedAt());
            case EXPIRED ->
                new LockProblem(
                        409,
                        "lock-taken-over",
                        "Your edit lock expired and was taken over",
                        "Your lock on " + what + " expired at " + e.endedAt() + "." + after,
                        null,
                        null,
                        null,
                        e.endedAt());
        };
        return e.holder()
                .map(h -> new LockProblem(
                        problem.status,
                        problem.code,
                        problem.title,
                        problem.detail,
                        h.owner(),
                        h.expiresAt(),
                        problem.endedBy,
                        problem.endedAt))
                .orElse(problem);
    }

    /**
     * The problem for a form that carried no lock id, or one that cannot be a lock id.
     *
     * @param missing true if the form carried no lock id (or a blank one); false if it carried something that
     *                cannot be a lock id
     * @return a 400 {@code bad-lock-id} problem
     */
    public static LockProblem badLockId(boolean missing) {
        return new LockProblem(
                HttpStatus.BAD_REQUEST.value(),
                "bad-lock-id",
                missing ? "The form carried no lock" : "The form carried a damaged lock",
                (missing
                                ? "The form did not carry the edit lock it was opened with"
                                : "The form carried something that is not a lock id")
                        + ", so it cannot be saved. Nothing was changed. Open the page again.",
                null,
                null,
                null,
                null);
    }

    /** {@code owner}, {@code expiresAt}, {@code endedBy} and {@code endedAt} (instants in ISO-8601), where present. */
    @Override
    public void addProperties(ProblemDetail problem) {
        if (owner != null) {
            problem.setProperty("owner", owner);
        }
        if (expiresAt != null) {
            problem.setProperty("expiresAt", expiresAt.toString());
        }
        if (endedBy != null) {
            problem.setProperty("endedBy", endedBy);
        }
        if (endedAt != null) {
            problem.setProperty("endedAt", endedAt.toString());
        }
    }

    private static String readable(String type) {
        return type.replace('_', ' ');
    }
}
