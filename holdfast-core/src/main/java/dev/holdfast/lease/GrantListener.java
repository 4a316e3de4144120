package dev.holdfast.lease;

/**
 * Told of each grant a {@link LeaseService} makes, on the thread of the call that asked for it, just before the call
 * returns it ({@link LeaseService.Builder#onGrant}): for observations and logs. Not told of renewals.
 */
@FunctionalInterface
public interface GrantListener {

    /**
     * {@code lease} was granted by way of {@code path}. An exception thrown here is ignored.
     *
     * @param lease the grant, as the call that asked for it is about to return it
     * @param path  how the grant reached that call
     */
    void granted(Lease lease, GrantPath path);
}
