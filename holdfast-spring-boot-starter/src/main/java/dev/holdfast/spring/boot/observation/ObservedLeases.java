package dev.holdfast.spring.boot.observation;

import dev.holdfast.internal.Arguments;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.lease.GrantListener;
import dev.holdfast.lease.GrantPath;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseGuard;
import dev.holdfast.lease.LeaseLostException;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.lease.LeaseTimeoutException;
import dev.holdfast.lease.Leases;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * {@link Leases} that make a {@link HoldfastObservation#LEASE_ACQUIRE} observation of every acquire
 * ({@code tryAcquire}, {@code tryAcquireOrRenew}, and {@code acquire}, which waits) of the leases they decorate;
 * every call, and its outcome or exception, is the delegate's, unchanged. Renewals, releases and the rest are
 * delegated unobserved. The observation is in scope during the call, so a {@link LeaseService} built with
 * {@link #grantListener(ObservationRegistry)} as its {@link LeaseService.Builder#onGrant} tags how each grant came
 * ({@code holdfast.lease.grant}: e.g. {@code handed_off}). With a registry that has no handler (or
 * {@link ObservationRegistry#NOOP}) the calls go straight to the delegate.
 */
public final class ObservedLeases implements Leases {

    private static final HoldfastObservationConvention DEFAULT = new DefaultLeaseObservationConvention();

    private final Leases delegate;
    private final ObservationRegistry registry;
    private final String database;
    private final @Nullable LeaseObservationConvention convention;

    /**
     * Observations with the default convention.
     *
     * @param delegate the leases whose {@code tryAcquire}, {@code tryAcquireOrRenew} and {@code acquire} calls are observed
     * @param registry where the observations are made
     * @param dialect  the database of {@code delegate}, for {@code db.system}
     * @throws IllegalArgumentException if an argument is null
     */
    public ObservedLeases(Leases delegate, ObservationRegistry registry, Dialect dialect) {
        this(delegate, registry, dialect, null);
    }

    /**
     * Observations named and tagged by {@code convention}.
     *
     * @param delegate   the leases whose {@code tryAcquire}, {@code tryAcquireOrRenew} and {@code acquire} calls are observed
     * @param registry   where the observations are made
     * @param dialect    the database of {@code delegate}, for {@code db.system}
     * @param convention replaces the default convention; null keeps it
     * @throws IllegalArgumentException if an argument other than {@code convention} is null
     */
    public ObservedLeases(
            Leases delegate,
            ObservationRegistry registry,
            Dialect dialect,
            @Nullable LeaseObservationConvention convention) {
        this.delegate = Arguments.notNull(delegate, "delegate");
        this.registry = Arguments.notNull(registry, "registry");
        this.database = Arguments.notNull(dialect, "dialect").id();
        this.convention = convention;
    }

    /**
     * A listener for {@link LeaseService.Builder#onGrant} that tells the lease observation in scope how its grant
     * came. It does nothing when no Holdfast lease observation is current.
     *
     * @param registry the registry the lease observations are made in
     * @return the listener
     * @throws IllegalArgumentException if {@code registry} is null
     */
    public static GrantListener grantListener(ObservationRegistry registry) {
        Arguments.notNull(registry, "registry");
        return (lease, path) -> {
            Observation current = registry.getCurrentObservation();
            if (current != null
                    && current.getContext() instanceof HoldfastObservationContext c
                    && c.observation() == HoldfastObservation.LEASE_ACQUIRE) {
                c.grant(path);
            }
        };
    }

    /** {@return the decorated leases} */
    public Leases delegate() {
        return delegate;
    }

    @Override
    public Optional<Lease> tryAcquire(String name, String owner, Duration ttl) {
        return tryObserved("try_acquire", name, () -> delegate.tryAcquire(name, owner, ttl));
    }

    @Override
    public Optional<Lease> tryAcquireOrRenew(String name, String owner, Duration ttl) {
        return tryObserved("try_acquire_or_renew", name, () -> delegate.tryAcquireOrRenew(name, owner, ttl));
    }

    @Override
    public Lease acquire(String name, String owner, Duration ttl, Duration maxWait) throws InterruptedException {
        if (registry.isNoop()) {
            return delegate.acquire(name, owner, ttl, maxWait);
        }
        HoldfastObservationContext context = context("acquire", name);
        Observation observation = start(context);
        try (Observation.Scope scope = observation.openScope()) {
            Lease lease = delegate.acquire(name, owner, ttl, maxWait);
            granted(context);
            return lease;
        } catch (InterruptedException e) {
            context.outcome("interrupted");
            observation.error(e);
            throw e;
        } catch (RuntimeException e) {
            context.outcome(e instanceof LeaseTimeoutException ? "timeout" : "error");
            observation.error(e);
            throw e;
        } finally {
            observation.stop();
        }
    }

    @Override
    public Lease renew(Lease lease, Duration ttl) {
        return delegate.renew(lease, ttl);
    }

    @Override
    public void release(Lease lease) {
        delegate.release(lease);
    }

    @Override
    public void release(Lease lease, Duration heldAtLeast) {
        delegate.release(lease, heldAtLeast);
    }

    @Override
    public void unlock(String name, String owner) {
        delegate.unlock(name, owner);
    }

    @Override
    public LeaseGuard keepAlive(Lease lease, Duration ttl, @Nullable Consumer<LeaseLostException> onLost) {
        return delegate.keepAlive(lease, ttl, onLost);
    }

    @Override
    public List<Lease> list() {
        return delegate.list();
    }

    @Override
    public Optional<Lease> find(String name) {
        return delegate.find(name);
    }

    @Override
    public boolean forceRelease(String name) {
        return delegate.forceRelease(name);
    }

    @Override
    public boolean forceRelease(String name, String by) {
        return delegate.forceRelease(name, by);
    }

    /** Closes the decorated leases. */
    @Override
    public void close() {
        delegate.close();
    }

    private Optional<Lease> tryObserved(String operation, String name, Supplier<Optional<Lease>> call) {
        if (registry.isNoop()) {
            return call.get();
        }
        HoldfastObservationContext context = context(operation, name);
        Observation observation = start(context);
        try (Observation.Scope scope = observation.openScope()) {
            Optional<Lease> lease = call.get();
            if (lease.isPresent()) {
                granted(context);
            } else {
                context.outcome("refused");
            }
            return lease;
        } catch (RuntimeException e) {
            context.outcome("error");
            observation.error(e);
            throw e;
        } finally {
            observation.stop();
        }
    }

    private HoldfastObservationContext context(String operation, @Nullable String name) {
        return new HoldfastObservationContext(
                HoldfastObservation.LEASE_ACQUIRE, operation, String.valueOf(name), "", database);
    }

    private Observation start(HoldfastObservationContext context) {
        return Observation.createNotStarted(convention, DEFAULT, () -> context, registry)
                .start();
    }

    /** A grant the service's listener did not tell of (another implementation, a renewal) came by its own statement. */
    private static void granted(HoldfastObservationContext context) {
        context.outcome("acquired");
        if (context.grant() == null) {
            context.grant(GrantPath.OWN_STATEMENT);
        }
    }
}
