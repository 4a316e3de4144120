package dev.holdfast.lease;

import dev.holdfast.HoldfastException;
import org.jspecify.annotations.Nullable;

/** Root of the outcomes of {@link LeaseService}: a lease not held, expired, lost, or not granted in time. */
public abstract class LeaseException extends HoldfastException {

    /** The lease name concerned. */
    private final String name;

    LeaseException(String name, String message, @Nullable Throwable cause) {
        super(message, cause);
        this.name = name;
    }

    /** {@return the lease name concerned} */
    public String leaseName() {
        return name;
    }
}
