package dev.holdfast.spring.boot.metrics;

import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseGuard;
import dev.holdfast.lease.LeaseLostException;
import dev.holdfast.lease.LeaseTimeoutException;
import dev.holdfast.lease.Leases;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * {@link Leases} that counts what the leases it decorates do: {@code holdfast.lease.acquisitions},
 * {@code holdfast.lease.refusals} (held by another caller, or a blocking acquire's bound ran out; tag
 * {@code reason} = held, timeout) and {@code holdfast.lease.losses} (a kept-alive lease was lost); and the gauge
 * {@code holdfast.leases.held} (live leases of all servers, one query per publish). The lease name is no tag:
 * names are often per entity (an order, a tenant), and each would be a meter of its own; observations carry it as
 * a high-cardinality key. Every call is delegated unchanged, exceptions included.
 */
public final class MeteredLeases implements Leases {

    private final Leases leases;
    private final Counter acquisitions;
    private final Counter refusedHeld;
    private final Counter refusedTimeout;
    private final Counter losses;

    /**
     * Decorates {@code leases}, registering the meters in {@code registry} at once.
     *
     * @param leases   the leases whose calls are counted
     * @param registry where the counters and the {@code holdfast.leases.held} gauge are registered
     */
    public MeteredLeases(Leases leases, MeterRegistry registry) {
        this.leases = leases;
        this.acquisitions = Counter.builder("holdfast.lease.acquisitions")
                .description("Leases granted")
                .register(registry);
        this.refusedHeld = refusals("held", registry);
        this.refusedTimeout = refusals("timeout", registry);
        this.losses = Counter.builder("holdfast.lease.losses")
                .description("Kept-alive leases lost")
                .register(registry);
        Gauge.builder("holdfast.leases.held", leases, l -> l.list().size())
                .description("Live leases (all servers, database time)")
                .register(registry);
    }

    /** {@return the decorated leases} */
    public Leases delegate() {
        return leases;
    }

    /** Counted as an acquisition or a refusal. */
    @Override
    public Optional<Lease> tryAcquire(String name, String owner, Duration ttl) {
        Optional<Lease> lease = leases.tryAcquire(name, owner, ttl);
        (lease.isPresent() ? acquisitions : refusedHeld).increment();
        return lease;
    }

    /** Counted as an acquisition or a refusal. */
    @Override
    public Optional<Lease> tryAcquireOrRenew(String name, String owner, Duration ttl) {
        Optional<Lease> lease = leases.tryAcquireOrRenew(name, owner, ttl);
        (lease.isPresent() ? acquisitions : refusedHeld).increment();
        return lease;
    }

    /** Counted as an acquisition, or a refusal when the bound runs out. */
    @Override
    public Lease acquire(String name, String owner, Duration ttl, Duration maxWait) throws InterruptedException {
        try {
            Lease lease = leases.acquire(name, owner, ttl, maxWait);
            acquisitions.increment();
            return lease;
        } catch (LeaseTimeoutException e) {
            refusedTimeout.increment();
            throw e;
        }
    }

    @Override
    public Lease renew(Lease lease, Duration ttl) {
        return leases.renew(lease, ttl);
    }

    @Override
    public void release(Lease lease) {
        leases.release(lease);
    }

    @Override
    public void release(Lease lease, Duration heldAtLeast) {
        leases.release(lease, heldAtLeast);
    }

    @Override
    public void unlock(String name, String owner) {
        leases.unlock(name, owner);
    }

    /** A loss is counted before {@code onLost} is called. */
    @Override
    public LeaseGuard keepAlive(Lease lease, Duration ttl, @Nullable Consumer<LeaseLostException> onLost) {
        return leases.keepAlive(lease, ttl, lost -> {
            losses.increment();
            if (onLost != null) {
                onLost.accept(lost);
            }
        });
    }

    @Override
    public List<Lease> list() {
        return leases.list();
    }

    @Override
    public Optional<Lease> find(String name) {
        return leases.find(name);
    }

    @Override
    public boolean forceRelease(String name) {
        return leases.forceRelease(name);
    }

    @Override
    public boolean forceRelease(String name, String by) {
        return leases.forceRelease(name, by);
    }

    /** Closes the decorated leases (closing them twice is harmless). */
    @Override
    public void close() {
        leases.close();
    }

    private static Counter refusals(String reason, MeterRegistry registry) {
        return Counter.builder("holdfast.lease.refusals")
                .description("Lease acquires refused")
                .tag("reason", reason)
                .register(registry);
    }
}
