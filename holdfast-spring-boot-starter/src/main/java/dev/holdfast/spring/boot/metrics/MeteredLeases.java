package dev.holdfast.spring.boot.metrics;

import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseGuard;
import dev.holdfast.lease.LeaseLostException;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.lease.LeaseTimeoutException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The acquire and keep-alive calls of a {@link LeaseService}, counted:
 * {@code holdfast.lease.acquisitions}, {@code holdfast.lease.refusals} (held by another owner, or a
 * blocking acquire's bound ran out; tag {@code reason} = held, timeout) and {@code holdfast.lease.losses}
 * (a kept-alive lease was lost), all tagged {@code name}; and the gauge {@code holdfast.leases.held}
 * (live leases of all servers, one query per publish). {@code LeaseService} is final, so metered
 * callers use this class; {@link #service()} gives the rest (release, list, forceRelease).
 */
public class MeteredLeases {

    private final LeaseService leases;
    private final MeterRegistry registry;

    public MeteredLeases(LeaseService leases, MeterRegistry registry) {
        this.leases = leases;
        this.registry = registry;
        Gauge.builder("holdfast.leases.held", leases, l -> l.list().size())
                .description("Live leases (all servers, database time)")
                .register(registry);
    }

    /** The metered service. */
    public LeaseService service() {
        return leases;
    }

    /** {@link LeaseService#tryAcquire}, counted as an acquisition or a refusal. */
    public Optional<Lease> tryAcquire(String name, String owner, Duration ttl) {
        Optional<Lease> lease = leases.tryAcquire(name, owner, ttl);
        count(lease.isPresent() ? "holdfast.lease.acquisitions" : "holdfast.lease.refusals", name, "held");
        return lease;
    }

    /** {@link LeaseService#lock}, counted as an acquisition, or a refusal when the bound runs out. */
    public Lease lock(String name, String owner, Duration ttl, Duration maxWait) throws InterruptedException {
        try {
            Lease lease = leases.lock(name, owner, ttl, maxWait);
            count("holdfast.lease.acquisitions", name, null);
            return lease;
        } catch (LeaseTimeoutException e) {
            count("holdfast.lease.refusals", name, "timeout");
            throw e;
        }
    }

    /** {@link LeaseService#keepAlive}; a loss is counted before {@code onLost} is called. */
    public LeaseGuard keepAlive(Lease lease, Duration ttl, Consumer<LeaseLostException> onLost) {
        return leases.keepAlive(lease, ttl, lost -> {
            count("holdfast.lease.losses", lease.name(), null);
            if (onLost != null) {
                onLost.accept(lost);
            }
        });
    }

    private void count(String meter, String name, String reason) {
        Counter.Builder b = Counter.builder(meter).tag("name", name);
        if (reason != null) {
            b.tag("reason", reason);
        }
        b.register(registry).increment();
    }
}
