package dev.holdfast.lease;

import dev.holdfast.HoldfastException;

/** Root of the outcomes of {@link LeaseService}: a lease not held, expired, lost, or not granted in time. */
public abstract class LeaseException extends HoldfastException {

    private final String name;

    LeaseException(String name, String message, Throwable cause) {
        super(message, cause);
        this.name = name;
    }

    /** The lease name concerned. */
    public String leaseName() {
        return name;
    }
}
