package dev.holdfast.lease;

import dev.holdfast.DatabaseException;
import dev.holdfast.internal.Arguments;
import dev.holdfast.jdbc.CommitDurability;
import dev.holdfast.jdbc.ConnectionPool;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SqlIdentifier;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.lease.internal.LeaseArguments;
import dev.holdfast.lease.internal.LeaseProbe;
import dev.holdfast.lease.internal.LeaseSettings;
import dev.holdfast.lease.internal.LeaseTuning;
import org.jspecify.annotations.Nullable;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import javax.sql.DataSource;

/**
 * Distributed leases in a database table, with fencing tokens, a bounded blocking acquire and keep-alive. Every
 * expiry decision uses database time; the application's clock is never read (waits use {@link System#nanoTime()}).
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
 * <p>Each call is one statement (or shares one: {@link Builder#batching}); on PostgreSQL a release also hands the lease
 * to the first queued waiter in the same round trip; a refused release or renewal reads the row once more to say why.
 * Arguments are checked before any SQL runs: names and owners 1–{@value #MAX_NAME_LENGTH} characters without control
 * characters or unpaired surrogates, a TTL {@value #MIN_TTL_MILLIS} ms to 366 days (microsecond precision), a wait
 * bound 0 to 366 days; else {@link IllegalArgumentException}.
 *
 * <p>A database failure raises {@link DatabaseException}; an acquire that failed so may still have been granted (the
 * commit can succeed after the connection broke), and a retry is refused until that grant's TTL runs out. To take
 * such a grant back at once, give each attempt an owner of its own and retry with {@link #tryAcquireOrRenew} under
 * that owner: it re-enters the grant if it was made.
 *
 * <p>Give the service a plain pool, not one bound to the caller's transaction (a lease must not commit or roll back
 * with the caller's work); on PostgreSQL with READ COMMITTED connections (the default). Thread-safe; keep one per
 * table and close it at shutdown. After {@link #close()}, calls that need its threads ({@link #acquire} with a wait,
 * {@link #keepAlive}) throw {@link IllegalStateException}.
 */
public final class LeaseService implements Leases, LeaseRenewer {

    /** Longest lease name or owner, in characters (code points, as the column counts them). */
    public static final int MAX_NAME_LENGTH = LeaseArguments.MAX_NAME_LENGTH;
    /** Shortest TTL: expiry precision on every database is far finer, but shorter leases are meaningless. */
    public static final long MIN_TTL_MILLIS = LeaseArguments.MIN_TTL_MILLIS;
    /** Longest TTL or wait bound. */
    public static final Duration MAX_DURATION = LeaseArguments.MAX_DURATION;

    private final EngineLeases direct; // the engine's calls, and the batching the service was built with
    private final Leases calls; // direct, or the decorators around it

    private LeaseService(
            LeaseSettings settings,
            Batching batching,
            @Nullable GrantListener onGrant,
            List<UnaryOperator<Leases>> decorators) {
        this.direct = new EngineLeases(settings, batching, onGrant);
        this.calls = direct.decoratedBy(decorators);
    }

    /**
     * {@return a builder for leases in {@code dataSource}; table {@code holdfast_leases}, dialect
     * detected}
     *
     * @param dataSource a plain pool of the database that holds the lease table, not one bound to the
     *                   caller's transaction
     * @throws IllegalArgumentException if {@code dataSource} is null
     */
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
        private Duration failoverGrace = Duration.ZERO;
        private LeaseTuning tuning = LeaseTuning.DEFAULT;
        private @Nullable GrantListener onGrant;
        private @Nullable DataSource listenerDataSource;
        private ConnectionPool connectionPool = ConnectionPool.ABORTING;
        private final List<UnaryOperator<Leases>> decorators = new ArrayList<>();

        private Builder(DataSource dataSource) {
            this.dataSource = Arguments.notNull(dataSource, "dataSource");
        }

        /**
         * Sets the dialect, instead of detecting it from the data source (which borrows a connection).
         *
         * @param dialect the dialect of the data source's database
         * @return this builder
         * @throws IllegalArgumentException if {@code dialect} is null
         */
        public Builder dialect(Dialect dialect) {
            this.dialect = Arguments.notNull(dialect, "dialect");
            return this;
        }

        /**
         * The lease table, as installed by {@code SchemaInstaller.install(HoldfastTable.LEASES, table)};
         * {@link IllegalArgumentException} if it is not a plain (optionally schema-qualified) identifier.
         *
         * @param table the table's name, as {@link SqlIdentifier} allows it (default {@code holdfast_leases})
         * @return this builder
         */
        public Builder table(String table) {
            this.table = SqlIdentifier.of(table).value();
            return this;
        }

        /**
         * How releases commit (default {@link CommitDurability#RELAXED}: on PostgreSQL without waiting for the
         * durable flush, inside their own statement's transaction). Acquires and renewals are always durable, so no
         * fencing token can repeat after a crash.
         *
         * @param durability how releases commit
         * @return this builder
         * @throws IllegalArgumentException if {@code durability} is null
         */
        public Builder durability(CommitDurability durability) {
            this.durability = Arguments.notNull(durability, "durability");
            return this;
        }

        /**
         * Cohort hand-off (default 0, off): the {@link #acquire} calls of this service for one name under one owner wait
         * in memory, in arrival order, and a release passes the lease to the first of them without a statement, at most
         * {@code max} times in a row; then the lease goes back to the database, where the first waiter of any instance
         * takes it. Each holder still gets a greater fencing token (a grant's first hand-off reserves a block of
         * {@code max} tokens, so {@link #find} shows the top of the block). Renew and release it through this service.
         *
         * @param max hand-offs in memory of one database grant, 0 (off) to 10,000
         * @return this builder
         * @throws IllegalArgumentException if {@code max} is out of range
         */
        public Builder cohortHandOffs(int max) {
            this.cohortHandOffs = LeaseArguments.cohortHandOffs(max);
            return this;
        }

        /**
         * Sets whether concurrent calls commit together (default {@link Batching#OFF}: none); see {@link Batching}.
         *
         * @param batching the batching mode
         * @return this builder
         * @throws IllegalArgumentException if {@code batching} is null
         */
        public Builder batching(Batching batching) {
            this.batching = Arguments.notNull(batching, "batching");
            return this;
        }

        /**
         * A grace after a PostgreSQL failover (default none), for asynchronous standbys: a promoted server grants
         * nothing until {@code longestTtl} after its first grant statement, so no new holder overlaps a grant the old
         * primary made and the standby never received. A longer TTL is then refused ({@link IllegalArgumentException});
         * give every service of the table the same bound. H2, MariaDB: only the bound applies.
         *
         * @param longestTtl the longest TTL the service grants or renews for, and the grace: 1 ms to 366 days
         * @return this builder
         * @throws IllegalArgumentException if {@code longestTtl} is null or out of range
         */
        public Builder failoverGrace(Duration longestTtl) {
            LeaseArguments.ttlMicros(longestTtl);
            this.failoverGrace = longestTtl;
            return this;
        }

        /**
         * Tells {@code listener} of each grant of the service, and how it reached its caller (see
         * {@link GrantListener}). A later call replaces the listener.
         *
         * @param listener told of each grant, on the thread of the call that asked for it
         * @return this builder
         * @throws IllegalArgumentException if {@code listener} is null
         */
        public Builder onGrant(GrantListener listener) {
            this.onGrant = Arguments.notNull(listener, "listener");
            return this;
        }

        /**
         * PostgreSQL: where the connection that listens for wake-ups ({@code LISTEN}) comes from, by default
         * the service's data source. Behind a transaction-pooling PgBouncer, where {@code LISTEN} does not
         * survive the transaction, give it a data source that reaches PostgreSQL directly (or through
         * session pooling); it keeps one connection. Without one there, blocking waiters poll (logged once).
         *
         * @param direct a data source that reaches PostgreSQL directly, or through session pooling
         * @return this builder
         * @throws IllegalArgumentException if {@code direct} is null
         */
        public Builder listenerDataSource(DataSource direct) {
            this.listenerDataSource = Arguments.notNull(direct, "listenerDataSource");
            return this;
        }

        /**
         * MariaDB: how the pool lets go of the two connections the wake-ups keep, and its size for the warning when it is
         * too small (default {@link ConnectionPool#ABORTING}; with HikariCP, evict them: see {@link ConnectionPool}).
         *
         * @param pool how the service's pool lets go of a connection, and its size
         * @return this builder
         * @throws IllegalArgumentException if {@code pool} is null
         */
        public Builder connectionPool(ConnectionPool pool) {
            this.connectionPool = Arguments.notNull(pool, "pool");
            return this;
        }

        /**
         * Sends the {@link Leases} calls through {@code decorator.apply(calls)}: the own ones, or the previous
         * decorator's (the last is the outermost), as for meters or translated exceptions; a guard's own calls are
         * not decorated.
         *
         * @param decorator given the calls so far when the service is built; returns the calls that wrap them,
         *                  not null
         * @return this builder
         * @throws IllegalArgumentException if {@code decorator} is null
         */
        public Builder decoratedBy(UnaryOperator<Leases> decorator) {
            decorators.add(Arguments.notNull(decorator, "decorator"));
            return this;
        }

        /**
         * Internal, for Holdfast's tests and benchmarks: knobs users do not turn; may change in any release.
         * Package-private, so that no public signature names an internal type; tests and benchmarks elsewhere
         * reach it through a {@code LeaseInternals} of their own.
         *
         * @param change given the current tuning, returns the tuning to use
         * @return this builder
         */
        Builder tune(UnaryOperator<LeaseTuning> change) {
            this.tuning = change.apply(tuning);
            return this;
        }

        /**
         * {@return a new service, open; close it at shutdown} Without a {@link #dialect}, it borrows one
         * connection to detect it.
         *
         * @throws DatabaseException        if detecting the dialect failed to connect or to read the metadata
         * @throws IllegalArgumentException if the detected database is not one Holdfast supports
         */
        public LeaseService build() {
            Dialect d = dialect != null ? dialect : Dialect.detect(dataSource);
            return new LeaseService(
                    new LeaseSettings(
                            dataSource,
                            d,
                            table,
                            durability,
                            cohortHandOffs,
                            batching.mode(),
                            failoverGrace.toNanos() / 1000,
                            tuning,
                            listenerDataSource,
                            connectionPool),
                    batching,
                    onGrant,
                    List.copyOf(decorators));
        }
    }

    /** {@return the dialect in use: the builder's, or the one detected} */
    public Dialect dialect() {
        return direct.engine().settings().dialect();
    }

    /** {@return the lease table's name, as given to {@link Builder#table} (default {@code holdfast_leases})} */
    public String table() {
        return direct.engine().settings().table();
    }

    /** {@return the batching this service was built with} */
    public Batching batching() {
        return direct.batching();
    }

    @Override
    public Optional<Lease> tryAcquire(String name, String owner, Duration ttl) {
        return calls.tryAcquire(name, owner, ttl);
    }

    @Override
    public Optional<Lease> tryAcquireOrRenew(String name, String owner, Duration ttl) {
        return calls.tryAcquireOrRenew(name, owner, ttl);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Waiters queue in the database in arrival order; a free lease goes only to the first live waiter. On
     * PostgreSQL the release grants it to that waiter and notifies it ({@code LISTEN/NOTIFY}, one listener thread
     * and one pooled connection per service; size the pool for it); on H2 waiters poll (1 to 5 ms backoff), woken by a
     * release through their service; on MariaDB by any release too (KILL QUERY; two pooled connections, with room for a
     * third: {@link Builder#connectionPool}). The bound covers waiting for a pooled connection too (plus at most 0.1 s,
     * so that every call makes at least one attempt). With
     * {@link Builder#cohortHandOffs}, calls of this service for one name and owner wait in memory instead.
     *
     * @throws IllegalStateException if this service was closed and {@code maxWait > 0}
     */
    @Override
    public Lease acquire(String name, String owner, Duration ttl, Duration maxWait) throws InterruptedException {
        return calls.acquire(name, owner, ttl, maxWait);
    }

    @Override
    public Lease renew(Lease lease, Duration ttl) {
        return calls.renew(lease, ttl);
    }

    /** As a {@link LeaseRenewer}: gives up after about {@code bound} on a stalled network; not decorated. */
    @Override
    public Optional<Lease> renew(Lease lease, Duration ttl, Duration bound) {
        return direct.renew(lease, ttl, bound);
    }

    @Override
    public void release(Lease lease) {
        calls.release(lease);
    }

    @Override
    public void release(Lease lease, Duration heldAtLeast) {
        calls.release(lease, heldAtLeast);
    }

    @Override
    public void unlock(String name, String owner) {
        calls.unlock(name, owner);
    }

    @Override
    public LeaseGuard keepAlive(Lease lease, Duration ttl, @Nullable Consumer<LeaseLostException> onLost) {
        return calls.keepAlive(lease, ttl, onLost);
    }

    @Override
    public List<Lease> list() {
        return calls.list();
    }

    @Override
    public Optional<Lease> find(String name) {
        return calls.find(name);
    }

    @Override
    public boolean forceRelease(String name) {
        return calls.forceRelease(name);
    }

    @Override
    public boolean forceRelease(String name, String by) {
        return calls.forceRelease(name, by);
    }

    /** Stops the background threads (the listener connection goes back to the pool). Leases stay as they are. */
    @Override
    public void close() {
        calls.close();
    }

    /** {@return what batching and cohort hand-off did since this service was built; all zero where both are off} */
    public BatchingStats batchingStats() {
        return BatchingStats.of(direct.engine().probe());
    }

    /**
     * {@return what this service's parts counted} Internal, for Holdfast's tests and benchmarks; may change in any
     * release. Package-private, as {@link Builder#tune} is.
     */
    LeaseProbe probe() {
        return direct.engine().probe();
    }
}
