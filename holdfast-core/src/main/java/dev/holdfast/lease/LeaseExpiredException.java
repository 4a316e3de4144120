package dev.holdfast.lease;

import dev.holdfast.lease.internal.LeaseRow;
import dev.holdfast.lease.internal.NotHeld;

/**
 * The caller's grant ran out (by database time) before it released or renewed it; another owner
 * may have taken the lease over since (then {@link #current()} shows that grant, with a greater
 * token). Whatever the caller did after its expiry may have overlapped another holder's critical
 * section: writes fenced by the token were refused, unfenced ones were not.
 */
public class LeaseExpiredException extends LeaseNotHeldException {

    /**
     * For implementations of {@link Leases}: the caller's grant ran out.
     *
     * @param name    the lease name
     * @param message the detail message
     * @param current the lease's row as it is now
     * @param reason  {@link Reason#EXPIRED}, or {@link Reason#GRANTED_AGAIN} if a newer grant exists
     */
    public LeaseExpiredException(String name, String message, Lease current, Reason reason) {
        super(name, message, current, reason, null, null);
    }

    /**
     * An internal refusal in the public vocabulary: this exception if the caller's grant ran out, else a
     * {@link LeaseNotHeldException} that says why.
     */
    static LeaseNotHeldException of(NotHeld refused) {
        LeaseNotHeldException.Reason reason =
                LeaseNotHeldException.Reason.valueOf(refused.why().name());
        LeaseRow row = refused.current();
        Lease current = row == null ? null : Lease.of(row);
        if (current != null && refused.expired()) {
            return new LeaseExpiredException(refused.name(), refused.message(), current, reason);
        }
        return new LeaseNotHeldException(
                refused.name(), refused.message(), current, reason, refused.brokenBy(), refused.brokenAt());
    }

    /** What {@code call} returns; an internal refusal it raises goes on in the public vocabulary ({@link #of}). */
    static <T> T reported(java.util.function.Supplier<T> call) {
        try {
            return call.get();
        } catch (NotHeld refused) {
            throw of(refused);
        }
    }

    /** Runs {@code call}; an internal refusal it raises goes on in the public vocabulary ({@link #of}). */
    static void reported(Runnable call) {
        reported(() -> {
            call.run();
            return true;
        });
    }
}
