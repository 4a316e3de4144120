package dev.holdfast.lease;

import org.jspecify.annotations.Nullable;

import java.util.Optional;

/**
 * Says why a release or renewal matched nothing: it reads the row once and names what happened
 * (no such lease, released, broken by whom, expired, granted again, another owner's).
 */
final class Refusals {

    private final LeaseCalls calls;
    private final LeaseJdbc jdbc;

    Refusals(LeaseCalls calls, LeaseJdbc jdbc) {
        this.calls = calls;
        this.jdbc = jdbc;
    }

    /** Reads the row to say precisely why {@code action} ("release", "renew") of the grant matched nothing. */
    LeaseNotHeldException notHeld(String action, String name, String owner, @Nullable Long token) {
        Optional<LeaseJdbc.Diagnosis> row = calls.call("diagnosing", name, c -> jdbc.diagnose(c, name));
        String cannot = "Cannot " + action + " lease '" + name + "' for '" + owner + "'"
                + (token == null ? "" : " (token " + token + ")");
        if (row.isEmpty()) {
            return new LeaseNotHeldException(name, cannot + ": there is no such lease", null,
                    LeaseNotHeldException.Reason.NO_SUCH_LEASE, null, null);
        }
        Lease current = row.get().lease();
        boolean sameOwner = current.owner().equals(owner);
        String now = " (now: " + describe(current) + ")";
        if (sameOwner && (token == null || current.token() == token)) {
            if (current.isReleased()) {
                LeaseJdbc.Broken broken = row.get().broken();
                if (broken != null) {
                    String by = broken.by().isEmpty() ? null : broken.by();
                    return new LeaseNotHeldException(name, cannot + ": it was broken by " + (by == null ? "an operator" : by)
                            + " at " + broken.at() + now, current, LeaseNotHeldException.Reason.BROKEN, by, broken.at());
                }
                return new LeaseNotHeldException(name, cannot + ": it was already released" + now, current,
                        LeaseNotHeldException.Reason.RELEASED, null, null);
            }
            return new LeaseExpiredException(name, cannot + ": it expired at " + current.expiresAt()
                    + " (database time); the critical section may have overlapped another holder's" + now, current,
                    LeaseNotHeldException.Reason.EXPIRED);
        }
        if (token != null && current.token() > token) {
            return new LeaseExpiredException(name, cannot + ": it expired and was granted again since" + now
                    + "; the critical section may have overlapped another holder's", current,
                    LeaseNotHeldException.Reason.GRANTED_AGAIN);
        }
        return new LeaseNotHeldException(name, cannot + ": " + (sameOwner ? "no such grant" : "not the owner") + now,
                current, sameOwner ? LeaseNotHeldException.Reason.NO_SUCH_GRANT : LeaseNotHeldException.Reason.OTHER_OWNER,
                null, null);
    }

    /** A release of a grant this service has passed on in memory already. */
    static LeaseNotHeldException passedOn(String name, String owner, long token, Lease holder) {
        return new LeaseNotHeldException(name, "Cannot release lease '" + name + "' for '" + owner
                + "' (token " + token + "): it was already released and passed on within this service"
                + " (now: " + describe(holder) + ")", holder, LeaseNotHeldException.Reason.RELEASED, null, null);
    }

    private static String describe(Lease l) {
        return "owner '" + l.owner() + "', token " + l.token() + ", acquired " + l.acquiredAt()
                + (l.isReleased() ? ", released" : ", expires " + l.expiresAt());
    }
}
