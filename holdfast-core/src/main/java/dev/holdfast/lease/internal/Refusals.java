package dev.holdfast.lease.internal;

import org.jspecify.annotations.Nullable;

import java.util.Optional;

/**
 * Says why a release or renewal matched nothing: it reads the row once and names what happened
 * (no such lease, released, broken by whom, expired, granted again, another owner's).
 */
final class Refusals {

    private final LeaseCalls calls;
    private final LeaseStore store;

    Refusals(LeaseCalls calls, LeaseStore store) {
        this.calls = calls;
        this.store = store;
    }

    /** Reads the row to say precisely why {@code action} ("release", "renew") of the grant matched nothing. */
    NotHeld notHeld(String action, String name, String owner, @Nullable Long token) {
        Optional<LeaseStore.Diagnosis> row = calls.call("diagnosing", name, c -> store.diagnose(c, name));
        String cannot = "Cannot " + action + " lease '" + name + "' for '" + owner + "'"
                + (token == null ? "" : " (token " + token + ")");
        if (row.isEmpty()) {
            return new NotHeld(name, cannot + ": there is no such lease", NotHeld.Why.NO_SUCH_LEASE, null);
        }
        LeaseRow current = row.get().lease();
        boolean sameOwner = current.owner().equals(owner);
        String now = " (now: " + describe(current) + ")";
        if (sameOwner && (token == null || current.token() == token)) {
            if (current.isReleased()) {
                LeaseStore.Broken broken = row.get().broken();
                if (broken != null) {
                    String by = broken.by().isEmpty() ? null : broken.by();
                    return new NotHeld(
                            name,
                            cannot + ": it was broken by " + (by == null ? "an operator" : by) + " at " + broken.at()
                                    + now,
                            NotHeld.Why.BROKEN,
                            current,
                            by,
                            broken.at());
                }
                return new NotHeld(name, cannot + ": it was already released" + now, NotHeld.Why.RELEASED, current);
            }
            return new NotHeld(
                    name,
                    cannot + ": it expired at " + current.expiresAt()
                            + " (database time); the critical section may have overlapped another holder's" + now,
                    NotHeld.Why.EXPIRED,
                    current);
        }
        if (token != null && current.token() > token) {
            return new NotHeld(
                    name,
                    cannot + ": it expired and was granted again since" + now
                            + "; the critical section may have overlapped another holder's",
                    NotHeld.Why.GRANTED_AGAIN,
                    current);
        }
        return new NotHeld(
                name,
                cannot + ": " + (sameOwner ? "no such grant" : "not the owner") + now,
                sameOwner ? NotHeld.Why.NO_SUCH_GRANT : NotHeld.Why.OTHER_OWNER,
                current);
    }

    /** A release of a grant this service has passed on in memory already. */
    static NotHeld passedOn(String name, String owner, long token, LeaseRow holder) {
        return new NotHeld(
                name,
                "Cannot release lease '" + name + "' for '" + owner
                        + "' (token " + token + "): it was already released and passed on within this service"
                        + " (now: " + describe(holder) + ")",
                NotHeld.Why.RELEASED,
                holder);
    }

    private static String describe(LeaseRow l) {
        return "owner '" + l.owner() + "', token " + l.token() + ", acquired " + l.acquiredAt()
                + (l.isReleased() ? ", released" : ", expires " + l.expiresAt());
    }
}
