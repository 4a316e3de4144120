package dev.holdfast.spring.boot;

import dev.holdfast.internal.Arguments;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseGuard;
import dev.holdfast.lease.LeaseLostException;
import dev.holdfast.lease.Leases;
import org.jspecify.annotations.Nullable;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * {@link Leases} whose calls throw what a {@link HoldfastExceptionTranslator} makes of the exceptions of the leases
 * they decorate: Spring's {@code DataAccessException}s, the Holdfast exception as their cause; an exception it
 * does not translate (a bad argument) is thrown as it is. A kept-alive lease's loss still reaches {@code onLost}
 * as the {@link LeaseLostException} it is, and the {@link LeaseGuard} is the decorated leases' own.
 */
public final class TranslatingLeases implements Leases {

    private final Leases delegate;
    private final HoldfastExceptionTranslator translator;

    /**
     * Decorates {@code delegate}.
     *
     * @param delegate   the leases whose exceptions are translated
     * @param translator what makes Spring's exceptions of them
     * @throws IllegalArgumentException if an argument is null
     */
    public TranslatingLeases(Leases delegate, HoldfastExceptionTranslator translator) {
        this.delegate = Arguments.notNull(delegate, "delegate");
        this.translator = Arguments.notNull(translator, "translator");
    }

    @Override
    public Optional<Lease> tryAcquire(String name, String owner, Duration ttl) {
        return translator.translating(() -> delegate.tryAcquire(name, owner, ttl));
    }

    @Override
    public Optional<Lease> tryAcquireOrRenew(String name, String owner, Duration ttl) {
        return translator.translating(() -> delegate.tryAcquireOrRenew(name, owner, ttl));
    }

    @Override
    public Lease acquire(String name, String owner, Duration ttl, Duration maxWait) throws InterruptedException {
        try {
            return delegate.acquire(name, owner, ttl, maxWait);
        } catch (RuntimeException e) {
            throw translator.translate(e);
        }
    }

    @Override
    public Lease renew(Lease lease, Duration ttl) {
        return translator.translating(() -> delegate.renew(lease, ttl));
    }

    @Override
    public void release(Lease lease) {
        translator.translating(() -> delegate.release(lease));
    }

    @Override
    public void release(Lease lease, Duration heldAtLeast) {
        translator.translating(() -> delegate.release(lease, heldAtLeast));
    }

    @Override
    public void unlock(String name, String owner) {
        translator.translating(() -> delegate.unlock(name, owner));
    }

    @Override
    public LeaseGuard keepAlive(Lease lease, Duration ttl, @Nullable Consumer<LeaseLostException> onLost) {
        return translator.translating(() -> delegate.keepAlive(lease, ttl, onLost));
    }

    @Override
    public List<Lease> list() {
        return translator.translating(delegate::list);
    }

    @Override
    public Optional<Lease> find(String name) {
        return translator.translating(() -> delegate.find(name));
    }

    @Override
    public boolean forceRelease(String name) {
        return translator.translating(() -> delegate.forceRelease(name));
    }

    @Override
    public boolean forceRelease(String name, String by) {
        return translator.translating(() -> delegate.forceRelease(name, by));
    }

    /** Closes the decorated leases. */
    @Override
    public void close() {
        delegate.close();
    }
}
