package dev.holdfast.spring.boot.observation;

import dev.holdfast.lease.GrantPath;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * What a convention reads to name and tag one of Holdfast's observations: what was asked when it started, and how
 * it ended once it stops ({@link #outcome()}, a lease's {@link #grant()}; the exception is the observation's error).
 */
public final class HoldfastObservationContext extends Observation.Context {

    private final HoldfastObservation observation;
    private final String operation;
    private final String lockName;
    private final String resource;
    private final String database;
    private volatile String outcome = "unknown";
    private volatile @Nullable GrantPath grant;

    /**
     * The context of one observation, made before it starts; its outcome is {@code unknown} until set.
     *
     * @param observation which observation this is
     * @param operation   the call ({@code try_lock}, {@code acquire}, …), or the row lock's wait ({@code bounded}, …)
     * @param lockName    the lock's name (high cardinality)
     * @param resource    the table, offline lock type or entity (low cardinality); empty for a lease
     * @param database    the dialect's id: {@code h2}, {@code postgresql}, {@code mariadb}
     */
    public HoldfastObservationContext(
            HoldfastObservation observation, String operation, String lockName, String resource, String database) {
        this.observation = observation;
        this.operation = operation;
        this.lockName = lockName;
        this.resource = resource;
        this.database = database;
    }

    /** {@return which observation this is} */
    public HoldfastObservation observation() {
        return observation;
    }

    /** {@return the call, or for a row lock how it may wait} */
    public String operation() {
        return operation;
    }

    /** {@return the lock's name: row, {@code type:id}, lease name or {@code entity:id}} */
    public String lockName() {
        return lockName;
    }

    /** {@return the table, offline lock type or entity; empty for a lease} */
    public String resource() {
        return resource;
    }

    /** {@return the database: {@code h2}, {@code postgresql} or {@code mariadb}} */
    public String database() {
        return database;
    }

    /**
     * {@return how the call ended ({@code unknown} until it did); the values are listed with each
     * {@link HoldfastObservation}}
     */
    public String outcome() {
        return outcome;
    }

    /**
     * Sets the outcome; Holdfast does, before the observation stops.
     *
     * @param outcome one of the outcomes listed with the observation, e.g. {@code locked}
     */
    public void outcome(String outcome) {
        this.outcome = outcome;
    }

    /** {@return how a lease grant reached its caller; null for no grant, or another observation} */
    public @Nullable GrantPath grant() {
        return grant;
    }

    /**
     * Sets how the lease grant came; Holdfast does, from the service's {@link dev.holdfast.lease.GrantListener}.
     *
     * @param grant how the grant reached its caller, or null for none
     */
    public void grant(@Nullable GrantPath grant) {
        this.grant = grant;
    }
}
