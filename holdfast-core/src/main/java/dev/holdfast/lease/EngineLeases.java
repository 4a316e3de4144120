package dev.holdfast.lease;

import dev.holdfast.internal.Invariants;
import dev.holdfast.lease.internal.LeaseEngine;
import dev.holdfast.lease.internal.LeaseSettings;
import dev.holdfast.lease.internal.WaitTimedOut;
import org.jspecify.annotations.Nullable;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

import static dev.holdfast.lease.LeaseExpiredException.reported;

/** A {@link LeaseService}'s own calls on its engine, before any {@link LeaseService.Builder#decoratedBy decorator}. */
final class EngineLeases implements Leases, LeaseRenewer {

    private final LeaseEngine engine;
    private final Batching batching;

    EngineLeases(LeaseSettings settings, Batching batching, @Nullable GrantListener onGrant) {
        this.engine = new LeaseEngine(settings);
        this.batching = batching;
        engine.onGrant(onGrant == null ? null : (row, path) -> onGrant.granted(Lease.of(row), GrantPath.of(path)));
    }

    LeaseEngine engine() {
        return engine;
    }

    Batching batching() {
        return batching;
    }

    /** These calls inside {@code decorators}, the last one outermost. */
    Leases decoratedBy(List<UnaryOperator<Leases>> decorators) {
        Leases decorated = this;
        for (UnaryOperator<Leases> decorator : decorators) {
            decorated = Invariants.nonNull(decorator.apply(decorated), "a decorator returned null");
        }
        return decorated;
    }

    @Override
    public Optional<Lease> tryAcquire(String name, String owner, Duration ttl) {
        return engine.acquire(name, owner, ttl).map(Lease::of);
    }

    @Override
    public Optional<Lease> tryAcquireOrRenew(String name, String owner, Duration ttl) {
        return engine.acquireOrRenew(name, owner, ttl).map(Lease::of);
    }

    @Override
    public Lease acquire(String name, String owner, Duration ttl, Duration maxWait) throws InterruptedException {
        try {
            return Lease.of(engine.acquire(name, owner, ttl, maxWait));
        } catch (WaitTimedOut timedOut) {
            throw LeaseTimeoutException.of(name, owner, maxWait, timedOut);
        }
    }

    @Override
    public Lease renew(Lease lease, Duration ttl) {
        return reported(() -> Lease.of(engine.renew(Lease.checked(lease).row(), ttl)));
    }

    @Override
    public Optional<Lease> renew(Lease lease, Duration ttl, Duration bound) {
        return reported(() ->
                engine.renewBounded(Lease.checked(lease).row(), ttl, bound).map(Lease::of));
    }

    @Override
    public void release(Lease lease) {
        release(lease, Duration.ZERO);
    }

    @Override
    public void release(Lease lease, Duration heldAtLeast) {
        Lease.checked(lease);
        reported(() -> engine.release(lease.name(), lease.owner(), lease.token(), heldAtLeast));
    }

    @Override
    public void unlock(String name, String owner) {
        reported(() -> engine.release(name, owner, null, Duration.ZERO));
    }

    @Override
    public LeaseGuard keepAlive(Lease lease, Duration ttl, @Nullable Consumer<LeaseLostException> onLost) {
        Lease.checked(lease);
        engine.checkKeepAlive(ttl);
        long sent = System.nanoTime();
        return LeaseGuard.start(this, engine.threads(), renew(lease, ttl), ttl, sent, onLost);
    }

    @Override
    public List<Lease> list() {
        return engine.list().stream().map(Lease::of).toList();
    }

    @Override
    public Optional<Lease> find(String name) {
        return engine.find(name).map(Lease::of);
    }

    @Override
    public boolean forceRelease(String name) {
        return engine.forceRelease(name);
    }

    @Override
    public boolean forceRelease(String name, String by) {
        return engine.forceRelease(name, by);
    }

    @Override
    public void close() {
        engine.close();
    }
}
