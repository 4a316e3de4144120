package dev.holdfast.spring.boot.web;

import dev.holdfast.pessimistic.offline.AlreadyLockedException;
import dev.holdfast.pessimistic.offline.ForeignLockException;
import dev.holdfast.pessimistic.offline.LockExpiredException;
import dev.holdfast.pessimistic.offline.LockNotHeldException;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;
import org.springframework.web.ErrorResponse;

import java.time.Instant;

/**
 * What went wrong with an offline lock, for a page or, as an {@link ErrorResponse}, a problem-detail
 * response. Never contains a lock id.
 *
 * @param status    409 for lock conflicts and lost locks, 400 for a malformed or missing lock id
 * @param code      a stable code: {@code already-locked}, {@code lock-expired}, {@code other-owner},
 *                  {@code other-resource}, {@code no-lock}, {@code bad-lock-id}
 * @param title     a short headline
 * @param detail    what happened and that nothing was changed
 * @param owner     who holds the lock, for {@code already-locked} (null if unknown)
 * @param expiresAt until when it is held (already-locked) or when it expired (lock-expired); else null
 */
public record LockProblem(int status, String code, String title, String detail, String owner, Instant expiresAt)
        implements ErrorResponse {

    /** The problem for a refused offline lock call. */
    public static LockProblem of(AlreadyLockedException e) {
        String who = e.owner().orElse("someone else");
        return new LockProblem(HttpStatus.CONFLICT.value(), "already-locked", "Being edited by " + who,
                who + " is editing this " + readable(e.type()) + " (" + e.id() + ") and holds its lock. "
                        + "You can edit it when they save, cancel, or their lock expires.",
                e.owner().orElse(null), e.expiresAt());
    }

    /** The problem for a lock id that authorizes nothing. */
    public static LockProblem of(LockNotHeldException e) {
        if (e instanceof LockExpiredException x) {
            return new LockProblem(409, "lock-expired", "Your edit lock expired",
                    "Your lock on this " + readable(x.type()) + " (" + x.id() + ") expired, so someone else may have "
                            + "changed it since. Nothing was saved. Open the page again to edit the current state.",
                    null, x.expiredAt());
        }
        if (e instanceof ForeignLockException f) {
            return f.reason() == ForeignLockException.Reason.OTHER_OWNER
                    ? new LockProblem(409, "other-owner", "Not your lock",
                            "The form carried a lock that belongs to someone else. Nothing was saved.", null, null)
                    : new LockProblem(409, "other-resource", "Lock of something else",
                            "The form carried a lock for something other than what it tried to change. Nothing was saved.",
                            null, null);
        }
        return new LockProblem(409, "no-lock", "You no longer hold the edit lock",
                "The lock this form carried was released, broken by an administrator, taken over after it expired, "
                        + "or never issued. Nothing was saved. Open the page again to edit the current state.",
                null, null);
    }

    /** The problem for a form that carried no lock id, or one that cannot be a lock id. */
    public static LockProblem badLockId(boolean missing) {
        return new LockProblem(HttpStatus.BAD_REQUEST.value(), "bad-lock-id",
                missing ? "The form carried no lock" : "The form carried a damaged lock",
                (missing ? "The form did not carry the edit lock it was opened with"
                        : "The form carried something that is not a lock id")
                        + ", so it cannot be saved. Nothing was changed. Open the page again.", null, null);
    }

    /**
     * This problem as an RFC 9457 problem detail, with {@code code}, {@code owner} and {@code expiresAt}
     * (ISO-8601) as extension properties; the body of {@link #getBody()}.
     */
    public ProblemDetail problemDetail() {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatusCode.valueOf(status), detail);
        problem.setTitle(title);
        problem.setProperty("code", code);
        if (owner != null) {
            problem.setProperty("owner", owner);
        }
        if (expiresAt != null) {
            problem.setProperty("expiresAt", expiresAt.toString());
        }
        return problem;
    }

    @Override
    public HttpStatusCode getStatusCode() {
        return HttpStatusCode.valueOf(status);
    }

    @Override
    public ProblemDetail getBody() {
        return problemDetail();
    }

    private static String readable(String type) {
        return type.replace('_', ' ');
    }
}
