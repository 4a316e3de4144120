package dev.holdfast.lease;

import dev.holdfast.DatabaseException;
import dev.holdfast.internal.Arguments;
import dev.holdfast.jdbc.CommitDurability;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SqlIdentifier;
import dev.holdfast.jdbc.dialect.Dialect;
import org.jspecify.annotations.Nullable;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import javax.sql.DataSource;

/**
 * Distributed leases in a database table, with fencing tokens, a bounded blocking acquire and
 * keep-alive. Every expiry decision uses database time; the application's clock is never read
 * (waits are measured with {@link System#nanoTime()}).
 *
 * <pre>{@code
 * new SchemaInstaller(dataSource).install(HoldfastTable.LEASES);   // once, or by Flyway
 * LeaseService leases = LeaseService.builder(dataSource).build();
 * Optional<Lease> lease = leases.tryAcquire("nightly-invoices", "server-7", Duration.ofMinutes(5));
 * if (lease.isPresent()) {
 *     try { ... write with fence.update(conn, lease.get().token(), ...) ... }
 *     finally { leases.release(lease.get()); }                     // throws if it had expired
 * }
 * }</pre>
 *
 * <p>Each call is one statement ({@link #tryAcquire} with {@link Builder#batching}: one for the calls
 * that queue while one is in flight); on PostgreSQL a release also hands the lease to the first
 * queued waiter in the same round trip; a refused release or renewal reads the row once more to say
 * why. Arguments are checked before any SQL runs: names and owners 1–{@value #MAX_NAME_LENGTH}
 * characters without control characters or unpaired surrogates, a TTL {@value #MIN_TTL_MILLIS} ms to
 * 366 days (microsecond precision), a wait bound 0 to 366 days; else {@link IllegalArgumentException}.
 *
 * <p>A database failure raises {@link DatabaseException}; an acquire that failed so may still have
 * been granted (the commit can succeed after the connection broke), and a retry is refused until that
 * grant's TTL runs out. To take such a grant back at once, give each attempt an owner of its own and
 * retry with {@link #tryLock} under that owner: it re-enters the grant if it was made.
 *
 * <p>Give the service a plain pool, not one bound to the caller's transaction (a lease must not commit
 * or roll back with the caller's work); on PostgreSQL with READ COMMITTED connections (the default).
 * Thread-safe; keep one per table and close it at shutdown. After {@link #close()}, calls that need
 * its threads ({@link #lock} with a wait, {@link #keepAlive}) throw {@link IllegalStateException}.
 */
public final class LeaseService implements Leases {

    /** Longest lease name or owner, in characters (code points, as the column counts them). */
    public static final int MAX_NAME_LENGTH = LeaseArguments.MAX_NAME_LENGTH;
    /** Shortest TTL: expiry precision on every database is far finer, but shorter leases are meaningless. */
    public static final long MIN_TTL_MILLIS = LeaseArguments.MIN_TTL_MILLIS;
    /** Longest TTL or wait bound. */
    public static final Duration MAX_DURATION = LeaseArguments.MAX_DURATION;

    private final LeaseSettings settings;
    private final LeaseParts parts;
    private volatile boolean closed;

    private LeaseService(LeaseSettings settings) {
        this.settings = settings;
        this.parts = LeaseParts.of(settings);
    }

    /** A builder for leases in {@code dataSource}; table {@code holdfast_leases}, dialect detected. */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /** Configures a {@link LeaseService}. */
    public static final class Builder {
        private final DataSource dataSource;
        private @Nullable Dialect dialect;
        private String table = HoldfastTable.LEASES.defaultName();
        private CommitDurability durability = CommitDurability.RELAXED;
        private int cohortHandOffs;
        private Batching batching = Batching.OFF;
        private LeaseTuning tuning = LeaseTuning.DEFAULT;

        private Builder(DataSource dataSource) {
            this.dataSource = Arguments.notNull(dataSource, "dataSource");
        }

        /** The dialect, instead of detecting it from the data source (which borrows a connection). */
        public Builder dialect(Dialect dialect) {
            this.dialect = Arguments.notNull(dialect, "dialect");
            return this;
        }

        /**
         * The lease table, as installed by {@code SchemaInstaller.install(HoldfastTable.LEASES, table)}.
         *
         * @throws IllegalArgumentException if it is not a plain (optionally schema-qualified) identifier
         */
        public Builder table(String table) {
            this.table = SqlIdentifier.of(table).value();
            return this;
        }

        /**
         * How releases commit (default {@link CommitDurability#RELAXED}: on PostgreSQL without waiting
         * for the durable flush, inside their own statement's transaction). Acquires and renewals are
         * always durable, so no fencing token can repeat after a crash.
         */
        public Builder durability(CommitDurability durability) {
            this.durability = Arguments.notNull(durability, "durability");
            return this;
        }

        /**
         * Cohort hand-off (default 0, off): the {@link #lock} calls of this service for one name under
         * one owner wait in memory, in arrival order, and a release passes the lease to the first of
         * them without a statement, at most {@code max} times in a row; then the lease goes back to the
         * database, where the first waiter of any instance takes it. Each holder still gets a greater
         * fencing token (a grant's first hand-off reserves a block of {@code max} tokens, so
         * {@link #find} shows the top of the block). Renew and release such a lease through this service.
         *
         * @param max hand-offs in memory of one database grant, 0 (off) to 10,000
         */
        public Builder cohortHandOffs(int max) {
            if (max < 0 || max > 10_000) {
                throw new IllegalArgumentException("cohortHandOffs must be 0 to 10000, not " + max);
            }
            this.cohortHandOffs = max;
            return this;
        }

        /** Whether concurrent calls commit together (default {@link Batching#OFF}); see {@link Batching}. */
        public Builder batching(Batching batching) {
            this.batching = Arguments.notNull(batching, "batching");
            return this;
        }

        /** Tests and benchmarks: knobs users do not turn. */
        Builder tune(UnaryOperator<LeaseTuning> change) {
            this.tuning = change.apply(tuning);
            return this;
        }

        /** The service. */
        public LeaseService build() {
            Dialect d = dialect != null ? dialect : Dialect.detect(dataSource);
            return new LeaseService(new LeaseSettings(dataSource, d, table, durability, cohortHandOffs, batching, tuning));
        }
    }

    /** The dialect in use. */
    public Dialect dialect() {
        return settings.dialect();
    }

    /** The lease table. */
    public String table() {
        return settings.table();
    }

    @Override
    public Optional<Lease> tryAcquire(String name, String owner, Duration ttl) {
        LeaseArguments.checkNameAndOwner(name, owner);
        long micros = LeaseArguments.ttlMicros(ttl);
        long sent = System.nanoTime();
        LeaseBatches batches = parts.batches();
        Optional<Lease> grant = batches != null ? batches.acquire(name, owner, micros)
                : parts.calls().acquire(name, owner, c -> parts.jdbc().acquire(c, name, owner, micros, false));
        return grant.map(g -> parts.grants().fromDatabase(g, sent, Grants.Path.ACQUIRED));
    }

    @Override
    public boolean tryLock(String name, String owner, Duration ttl) {
        LeaseArguments.checkNameAndOwner(name, owner);
        long micros = LeaseArguments.ttlMicros(ttl);
        closeCohort(name, owner); // it may renew (even shorten) a grant this service passes on
        return parts.calls().acquire(name, owner, c -> parts.jdbc().acquire(c, name, owner, micros, true)).isPresent();
    }

    /**
     * {@inheritDoc}
     *
     * <p>Waiters queue in the database in arrival order; a free lease goes only to the first live
     * waiter. On PostgreSQL the release grants it to that waiter and notifies it ({@code LISTEN/NOTIFY},
     * one listener thread and one pooled connection per service; size the pool for it); on H2 and
     * MariaDB waiters poll with backoff (1 to 5 ms), and a release through this service wakes its oldest
     * waiter at once. The bound covers waiting for a pooled connection too (plus at most 0.1 s, so that
     * every call makes at least one attempt). With {@link Builder#cohortHandOffs}, calls of this service
     * for one name and owner wait in memory instead.
     *
     * @throws IllegalStateException if this service was closed and {@code maxWait > 0}
     */
    @Override
    public Lease lock(String name, String owner, Duration ttl, Duration maxWait) throws InterruptedException {
        LeaseArguments.checkNameAndOwner(name, owner);
        long micros = LeaseArguments.ttlMicros(ttl);
        long waitNanos = LeaseArguments.waitNanos(maxWait);
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        return parts.blocking().lock(name, owner, micros, maxWait, waitNanos);
    }

    @Override
    public Lease renew(Lease lease, Duration ttl) {
        LeaseArguments.checkLease(lease);
        return parts.renewals().renew(lease, LeaseArguments.ttlMicros(ttl));
    }

    @Override
    public void release(Lease lease) {
        LeaseArguments.checkLease(lease);
        parts.releases().release(lease.name(), lease.owner(), lease.token(), null);
    }

    @Override
    public void unlock(String name, String owner) {
        LeaseArguments.checkNameAndOwner(name, owner);
        parts.releases().release(name, owner, null, null);
    }

    @Override
    public void release(Lease lease, Duration heldAtLeast) {
        LeaseArguments.checkLease(lease);
        long micros = LeaseArguments.heldAtLeastMicros(heldAtLeast);
        parts.releases().release(lease.name(), lease.owner(), lease.token(), micros == 0 ? null : micros);
    }

    @Override
    public LeaseGuard keepAlive(Lease lease, Duration ttl, @Nullable Consumer<LeaseLostException> onLost) {
        LeaseArguments.checkLease(lease);
        LeaseArguments.checkKeptAliveTtl(ttl);
        if (closed) {
            throw new IllegalStateException("The lease service is closed");
        }
        long sent = System.nanoTime();
        Lease renewed = renew(lease, ttl);
        return LeaseGuard.start(parts.renewals(), parts.threads(), renewed, ttl, sent, onLost);
    }

    @Override
    public List<Lease> list() {
        return parts.calls().call("listing", "*", parts.jdbc()::listLive);
    }

    @Override
    public Optional<Lease> find(String name) {
        LeaseArguments.checkName("Lease name", name);
        return parts.calls().call("reading", name, c -> parts.jdbc().read(c, name));
    }

    @Override
    public boolean forceRelease(String name) {
        LeaseArguments.checkName("Lease name", name);
        return breakLease(name, null);
    }

    @Override
    public boolean forceRelease(String name, String by) {
        LeaseArguments.checkName("Lease name", name);
        LeaseArguments.checkName("Lease by", by);
        return breakLease(name, by);
    }

    private boolean breakLease(String name, @Nullable String by) {
        boolean released = parts.calls().call("force-releasing", name, c -> parts.jdbc().forceRelease(c, name, by));
        closeCohort(name, null);
        if (released) {
            parts.pollers().wakeOldest(name);
        }
        return released;
    }

    /** Stops the background threads (the listener connection goes back to the pool). Leases stay as they are. */
    @Override
    public void close() {
        closed = true;
        CohortHandOffs cohorts = parts.cohorts();
        if (cohorts != null) {
            cohorts.closeAll();
        }
        PgWakeUps wakeUps = parts.wakeUps();
        if (wakeUps != null) {
            wakeUps.close();
        }
        parts.threads().close();
    }

    /** Ends cohort hand-offs of {@code name} for {@code owner} (every owner if null). */
    private void closeCohort(String name, @Nullable String owner) {
        CohortHandOffs cohorts = parts.cohorts();
        if (cohorts != null) {
            cohorts.closeAll(name, owner);
        }
    }

    /** Tests and benchmarks: counters of this service's parts. */
    LeaseProbe probe() {
        return new LeaseProbe(parts.blocking(), parts.cohorts(), parts.batches(), parts.grants(), settings.batching());
    }
}
