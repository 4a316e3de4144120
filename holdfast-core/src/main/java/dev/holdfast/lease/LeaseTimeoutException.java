package dev.holdfast.lease;

import java.time.Duration;

/** {@link Leases#acquire} waited its whole bound and the lease was still held by someone else. */
public class LeaseTimeoutException extends LeaseException {

    private final Duration maxWait;

    /**
     * For implementations of {@link Leases}: {@code lock} of {@code name} for {@code owner} waited
     * {@code maxWait} in {@code attempts} attempts.
     */
    public LeaseTimeoutException(String name, String owner, Duration maxWait, int attempts) {
        super(name, "Lease '" + name + "' was not granted to '" + owner + "' within " + maxWait.toMillis()
                + " ms (" + attempts + " attempts); nothing is held", null);
        this.maxWait = maxWait;
    }

    /** The bound that ran out. */
    public Duration maxWait() {
        return maxWait;
    }
}
