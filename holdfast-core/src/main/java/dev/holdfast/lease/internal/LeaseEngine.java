package dev.holdfast.lease.internal;

import org.jspecify.annotations.Nullable;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.BiConsumer;

/**
 * What a lease service does, in this package's terms: it checks each call's arguments and gives the
 * call to the part that does it (one statement, the blocking acquire, releases, renewals).
 */
public final class LeaseEngine implements AutoCloseable {

    /** Acquisitions, refusals and releases at DEBUG (the application's logging decides whether they show). */
    private static final System.Logger LOG = System.getLogger("dev.holdfast.lease");

    private final LeaseSettings settings;
    private final LeaseParts parts;
    private volatile boolean closed;

    /** Wires the parts {@code settings} ask for; starts no thread. */
    public LeaseEngine(LeaseSettings settings) {
        this.settings = settings;
        this.parts = LeaseParts.of(settings);
    }

    public LeaseSettings settings() {
        return settings;
    }

    /** An exclusive grant (batched when on), or empty if the lease is live. */
    public Optional<LeaseRow> acquire(String name, String owner, Duration ttl) {
        LeaseArguments.checkNameAndOwner(name, owner);
        long ttlMicros = ttlMicros(ttl);
        long sent = System.nanoTime();
        LeaseBatches batches = parts.batches();
        Optional<LeaseRow> grant = batches != null
                ? batches.acquire(name, owner, ttlMicros)
                : parts.calls().acquire(name, owner, ttlMicros, false);
        return logged(
                "acquired", name, owner, grant.map(g -> parts.grants().fromDatabase(g, sent, Grants.Path.ACQUIRED)));
    }

    /** A grant, or a renewal if {@code owner} holds it already; empty if another owner does. */
    public Optional<LeaseRow> acquireOrRenew(String name, String owner, Duration ttl) {
        LeaseArguments.checkNameAndOwner(name, owner);
        long ttlMicros = ttlMicros(ttl);
        closeCohort(name, owner); // it may renew (even shorten) a grant this service passes on
        return logged("acquired or renewed", name, owner, parts.calls().acquire(name, owner, ttlMicros, true));
    }

    /**
     * A grant within {@code waitNanos}.
     *
     * @throws WaitTimedOut if it was not granted in time
     */
    public LeaseRow acquire(String name, String owner, Duration ttl, Duration maxWait) throws InterruptedException {
        LeaseArguments.checkNameAndOwner(name, owner);
        long ttlMicros = ttlMicros(ttl);
        long waitNanos = LeaseArguments.waitNanos(maxWait);
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        try {
            return logged("acquired", parts.blocking().acquire(name, owner, ttlMicros, waitNanos));
        } catch (WaitTimedOut e) {
            LOG.log(
                    System.Logger.Level.DEBUG,
                    () -> "Lease '" + name + "' refused to '" + owner + "': not granted within " + maxWait);
            throw e;
        }
    }

    /**
     * The caller's renewal.
     *
     * @throws NotHeld why it is not held any more
     */
    public LeaseRow renew(LeaseRow lease, Duration ttl) {
        return parts.renewals().renew(lease, ttlMicros(ttl));
    }

    /**
     * A guard's renewal, bounded by {@code bound} on the network.
     *
     * @return empty if it is not held and the row cannot be read to say why
     * @throws NotHeld why it is not held any more
     */
    public Optional<LeaseRow> renewBounded(LeaseRow lease, Duration ttl, Duration bound) {
        ttlMicros(ttl);
        return parts.renewals().renew(lease, ttl, bound);
    }

    /**
     * Releases the caller's grant ({@code token} null: whatever grant {@code owner} holds).
     *
     * @param heldAtLeast keep it until this long after its grant ({@link Duration#ZERO}: end it now)
     * @throws NotHeld if it was not held
     */
    public void release(String name, String owner, @Nullable Long token, Duration heldAtLeast) {
        LeaseArguments.checkNameAndOwner(name, owner);
        long micros = LeaseArguments.heldAtLeastMicros(heldAtLeast);
        try {
            parts.releases().release(name, owner, token, micros == 0 ? null : micros);
        } catch (NotHeld e) {
            LOG.log(
                    System.Logger.Level.DEBUG,
                    () -> "Lease '" + name + "' not released by '" + owner + "' (token " + token + "): "
                            + e.getMessage());
            throw e;
        }
        LOG.log(
                System.Logger.Level.DEBUG,
                () -> "Lease '" + name + "' released by '" + owner + "' (token " + token
                        + (micros == 0 ? ")" : "), kept until " + heldAtLeast + " after its grant"));
    }

    private static Optional<LeaseRow> logged(String what, String name, String owner, Optional<LeaseRow> grant) {
        if (grant.isPresent()) {
            logged(what, grant.get());
        } else {
            LOG.log(
                    System.Logger.Level.DEBUG,
                    () -> "Lease '" + name + "' refused to '" + owner + "': live under another owner");
        }
        return grant;
    }

    private static LeaseRow logged(String what, LeaseRow grant) {
        LOG.log(
                System.Logger.Level.DEBUG,
                () -> "Lease '" + grant.name() + "' " + what + " by '" + grant.owner() + "' (token " + grant.token()
                        + ", until " + grant.expiresAt() + ")");
        return grant;
    }

    /**
     * Checks a guard's TTL and that this engine is open.
     *
     * @throws IllegalStateException if it was closed
     */
    public void checkKeepAlive(Duration ttl) {
        LeaseArguments.checkKeptAliveTtl(ttl);
        ttlMicros(ttl);
        if (closed) {
            throw new IllegalStateException("The lease service is closed");
        }
    }

    /** The TTL in microseconds, checked against the arguments' bounds and the longest TTL of a failover grace. */
    private long ttlMicros(@Nullable Duration ttl) {
        long micros = LeaseArguments.ttlMicros(ttl);
        long longest = settings.failoverGraceMicros();
        if (longest != 0 && micros > longest) {
            throw new IllegalArgumentException("Lease ttl must be at most the failover grace of this service, "
                    + Duration.ofNanos(longest * 1000) + ", not " + ttl);
        }
        return micros;
    }

    public List<LeaseRow> list() {
        return parts.calls().call("listing", "*", parts.store()::listLive);
    }

    public Optional<LeaseRow> find(String name) {
        LeaseArguments.checkName("Lease name", name);
        return parts.calls().call("reading", name, c -> parts.store().read(c, name));
    }

    /** Ends the lease whoever holds it. */
    public boolean forceRelease(String name) {
        LeaseArguments.checkName("Lease name", name);
        return breakLease(name, null);
    }

    /** Ends the lease whoever holds it, naming the operator. */
    public boolean forceRelease(String name, String by) {
        LeaseArguments.checkName("Lease name", name);
        LeaseArguments.checkName("Lease by", by);
        return breakLease(name, by);
    }

    private boolean breakLease(String name, @Nullable String by) {
        boolean released =
                parts.calls().call("force-releasing", name, c -> parts.store().forceRelease(c, name, by));
        closeCohort(name, null);
        if (released) {
            parts.pollers().wakeOldest(name);
        }
        return released;
    }

    /** The timer and background threads of this service's guards. */
    public LeaseThreads threads() {
        return parts.threads();
    }

    /** Tells {@code listener} of each grant, on the caller's thread, before it is returned; null for none. */
    public void onGrant(@Nullable BiConsumer<LeaseRow, Grants.Path> listener) {
        parts.grants().listen(listener);
    }

    /** Tests and benchmarks: what the parts counted. */
    public LeaseProbe probe() {
        return new LeaseProbe(parts.blocking(), parts.cohorts(), parts.batches(), parts.grants(), parts.threads());
    }

    /** Ends every cohort, stops the wake-up listener and the threads. Leases stay as they are. */
    @Override
    public void close() {
        closed = true;
        CohortHandOffs cohorts = parts.cohorts();
        if (cohorts != null) {
            cohorts.closeAll();
        }
        parts.wakeUps().close(); // before the threads: MariaDB's borrow through them
        parts.threads().close();
    }

    /** Ends cohort hand-offs of {@code name} for {@code owner} (every owner if null). */
    private void closeCohort(String name, @Nullable String owner) {
        CohortHandOffs cohorts = parts.cohorts();
        if (cohorts != null) {
            cohorts.closeAll(name, owner);
        }
    }
}
