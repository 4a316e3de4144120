package dev.holdfast.lease;

import org.jspecify.annotations.Nullable;

import java.util.Optional;

/**
 * A lease kept alive by a {@link LeaseGuard} is no longer held: a renewal found it expired or
 * taken over, or renewals kept failing until the last confirmed grant ran out. Work done under it
 * from now on is not protected; fenced writes with its token are refused once a newer grant writes.
 */
public class LeaseLostException extends LeaseException {

    /** The fencing token of the lost grant. */
    private final long token;

    LeaseLostException(String name, long token, String message, @Nullable Throwable cause) {
        super(name, message, cause);
        this.token = token;
    }

    /** {@return the fencing token of the lost grant} */
    public long token() {
        return token;
    }

    /**
     * {@return why the lease was lost, when a renewal was refused: the refusal says whether it expired,
     * was granted again, or was broken by an operator (and by whom); empty when renewals kept failing
     * or the lease was found lost for a reason not known}
     */
    public Optional<LeaseNotHeldException> refusal() {
        return getCause() instanceof LeaseNotHeldException refused ? Optional.of(refused) : Optional.empty();
    }
}
