package dev.holdfast.lease;

import dev.holdfast.internal.Arguments;
import dev.holdfast.DatabaseException;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SqlIdentifier;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.jdbc.dialect.SqlErrorKind;
import dev.holdfast.jdbc.internal.Jdbc;
import dev.holdfast.jdbc.internal.Names;
import dev.holdfast.jdbc.internal.Retry;
import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.security.SecureRandom;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import javax.sql.DataSource;

/**
 * Distributed leases in a database table, with fencing tokens, a
 * bounded blocking acquire and keep-alive. Every expiry decision uses database time; the
 * application's clock is never read (waits are measured with {@link System#nanoTime()}).
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
 * <table>
 *   <caption>Semantics</caption>
 *   <tr><th>operation</th><th>statements</th><th>outcome</th></tr>
 *   <tr><td>{@link #tryAcquire}</td><td>1 (with {@link Builder#batching}: one for all the calls that
 *       queue while one is in flight)</td><td>granted only if free, released or expired: a live grant
 *       refuses every call, even its own owner's; a new grant's token is greater than every earlier one
 *       of the name</td></tr>
 *   <tr><td>{@link #tryLock}</td><td>1</td><td>the classic re-entrant form: also true for the owner of the
 *       live grant, which is extended and keeps its token</td></tr>
 *   <tr><td>{@link #renew}</td><td>1</td><td>extends the caller's live grant (name, owner and token must
 *       match), same token</td></tr>
 *   <tr><td>{@link #release}, {@link #unlock}</td><td>1 (PostgreSQL: +1 to hand the lease to a queued
 *       waiter, in the same round trip where this service's last release of the name found waiters;
 *       +1 read to diagnose a failure; with {@link Builder#batching}, one release for the
 *       {@code release(lease)} calls that queue while one is in flight)</td><td>expires the row
 *       (never deletes it); {@link LeaseExpiredException} if the grant had run out,
 *       {@link LeaseNotHeldException} if the caller is not the holder or released already</td></tr>
 *   <tr><td>{@link #lock}</td><td>PostgreSQL: 1 to queue; the release hands the lease over; else polls with
 *       backoff. With {@link Builder#localHandOffs}: none for a call its own service passes the lease to
 *       (1 to reserve tokens at a grant's first local hand-off)</td>
 *       <td>waits at most {@code maxWait}, interruptibly; {@link LeaseTimeoutException} at the bound</td></tr>
 *   <tr><td>{@link #keepAlive}</td><td>1 per ttl/3</td><td>a {@link LeaseGuard} that renews and tells the
 *       work at once when the lease is lost</td></tr>
 * </table>
 *
 * <p>Arguments: names and owners are 1–{@value #MAX_NAME_LENGTH} characters, not blank, without control
 * characters or unpaired surrogates; a TTL is {@value #MIN_TTL_MILLIS} ms to 366 days (microsecond
 * precision); a wait bound 0 to 366 days. Anything else raises {@link IllegalArgumentException} before
 * any SQL runs. A database failure raises {@link DatabaseException}; an acquire that failed so may
 * still have been granted (the commit can succeed after the connection broke). Retrying with
 * {@link #tryAcquire} or {@link #lock} is then refused until that grant's TTL runs out, since
 * every acquire is exclusive. To take such a grant back at once, give each attempt an owner of its
 * own (a random id) and retry with {@link #tryLock} under that owner: it re-enters the grant if it
 * was made, and {@link #find} returns it with its token. Otherwise the grant expires by its TTL.
 *
 * <p>The service borrows a connection from its data source per operation and returns it at once.
 * Give it a plain pool, not one bound to the caller's transaction: a lease must not commit or roll
 * back with the caller's work. On PostgreSQL the pool's connections must use READ COMMITTED (the
 * default): a release learns whether anyone waits from the newest version of the lease row, which
 * READ COMMITTED re-reads when a waiter changed it meanwhile (REPEATABLE READ or SERIALIZABLE would
 * fail such a release with a serialization error instead). Thread-safe; keep one per table and
 * close it at shutdown. After {@link #close()}, calls that need its threads ({@link #lock} with a
 * wait, {@link #keepAlive}) throw {@link IllegalStateException}; the one-statement calls still work.
 */
public final class LeaseService implements Leases {

    /** Longest lease name or owner, in characters (code points, as the column counts them). */
    public static final int MAX_NAME_LENGTH = 200;
    /** Shortest TTL: expiry precision on every database is far finer, but shorter leases are meaningless. */
    public static final long MIN_TTL_MILLIS = 1;
    /** Longest TTL or wait bound. */
    public static final Duration MAX_DURATION = Duration.ofDays(366);

    /** How long a queue entry stays valid unless its waiter refreshes it (longer for a notified waiter with a long safety poll). */
    static final long QUEUE_ENTRY_MICROS = 2_000_000;
    /** The first and the longest wait before leaving the queue again after a failed attempt to. */
    private static final long GIVE_UP_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    private static final long MAX_GIVE_UP_RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** A notified waiter still re-checks this often (refreshing its queue entry, noticing expiries). */
    static final long SAFETY_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    static final long MIN_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    static final long MAX_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    /**
     * The longest poll of a queued waiter that is not notified (H2, MariaDB): a free lease waits for
     * the first waiter's next poll, as nobody else may take it, so that poll must come soon.
     */
    static final long MAX_QUEUED_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    private static final int ATTEMPTS_ON_RACE = 3;
    /**
     * How long past its bound an attempt of {@link #lock} may wait for a pooled connection, so that
     * a bound shorter than a hand-over from a background thread still gets one attempt, and a
     * waiter gets its last attempt at the bound.
     */
    static final long BORROW_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final SecureRandom WAITER_IDS = new SecureRandom();

    private final DataSource dataSource;
    private final Dialect dialect;
    private final String table;
    private final boolean fastRelease;
    private final long safetyPollNanos;
    private final long minPollNanos;
    private final long maxQueuedPollNanos;
    private final LeaseSql sql;
    private final LeaseJdbc jdbc;
    private final PgWakeUps wakeUps;
    private final Retry races;
    /**
     * This service's polling {@link #lock} calls (not woken by notifications) by lease name, oldest
     * first: a release through this service wakes the oldest at once, instead of at its next poll.
     */
    private final ConcurrentHashMap<String, ConcurrentLinkedDeque<PgWakeUps.Waiter>>
            localPollers = new ConcurrentHashMap<>();
    /** Grants this service's waiters received from a release's hand-off, without a statement of their own. */
    private final LongAdder handOffsReceived = new LongAdder();
    /** Cohort hand-off between this service's calls of one owner; null if off. */
    private final LocalHandOffs local;
    /** Batched commits of this service's tryAcquire and release calls; null if off (or on H2). */
    private final LeaseBatches batches;
    private volatile ScheduledExecutorService timer;
    private volatile ExecutorService background;
    /** Set by {@link #close}: no queue entry is given up in the background any more (it lapses). */
    private volatile boolean closed;

    private LeaseService(Builder b) {
        this.dataSource = b.dataSource;
        this.dialect = b.dialect != null ? b.dialect : Dialect.detect(b.dataSource);
        this.table = b.table;
        this.fastRelease = b.fastRelease;
        this.safetyPollNanos = b.safetyPollNanos;
        this.minPollNanos = b.minPollNanos;
        this.maxQueuedPollNanos = b.maxQueuedPollNanos;
        this.sql = LeaseSql.forDialect(dialect, table);
        this.jdbc = new LeaseJdbc(sql);
        this.wakeUps = sql instanceof LeaseSql.PostgreSql pg ? new PgWakeUps(dataSource, pg) : null;
        this.races = new Retry(dialect, Retry.RACES, ATTEMPTS_ON_RACE, () -> { });
        this.local = b.localHandOffs == 0 ? null : new LocalHandOffs(b.localHandOffs,
                (name, owner, token, tokens, ttl) -> call("reserving tokens of", name,
                        c -> jdbc.reserve(c, name, owner, token, tokens, ttl)),
                this::releaseQuietly);
        boolean lockstep = b.lockstepLingerNanos > 0; // one statement in flight for both kinds, unless a test says otherwise
        this.batches = !b.batching || sql.acquireAllSql(2) == null ? null : new LeaseBatches(dataSource, jdbc, races,
                fastRelease, b.batchesInFlight > 0 ? b.batchesInFlight : lockstep ? 1 : LeaseBatches.MAX_IN_FLIGHT,
                b.overlapAt > 0 ? b.overlapAt : lockstep ? 1 : LeaseBatches.OVERLAP_AT, b.lockstepLingerNanos,
                b.batchLoneCalls ? null : a -> acquireAlone(a.name(), a.owner(), a.ttlMicros()),
                b.batchLoneCalls ? null : r -> releasedInDatabase(r.name(), r.owner(), r.token(), null));
    }

    /** A builder for leases in {@code dataSource}; table {@code holdfast_leases}, dialect detected. */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /** Configures a {@link LeaseService}. */
    public static final class Builder {
        private final DataSource dataSource;
        private Dialect dialect;
        private String table = HoldfastTable.LEASES.defaultName();
        private boolean fastRelease = true;
        private long safetyPollNanos = SAFETY_POLL_NANOS;
        private long minPollNanos = MIN_BACKOFF_NANOS;
        private long maxQueuedPollNanos = MAX_QUEUED_POLL_NANOS;
        private int localHandOffs;
        private boolean batching;
        /** 0: the default of the mode (see {@link #batchesInFlight}). */
        private int batchesInFlight;
        private int overlapAt;
        private boolean batchLoneCalls;
        private long lockstepLingerNanos;

        private Builder(DataSource dataSource) {
            if (dataSource == null) {
                throw new IllegalArgumentException("dataSource must not be null");
            }
            this.dataSource = dataSource;
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
         * Whether a release may commit without waiting for the durable flush where that is provably
         * safe (default true). Only PostgreSQL has a per-transaction switch, used as
         * {@code set_config('synchronous_commit', 'off', true)} inside the release's own auto-commit
         * statement: the session's setting is untouched. Safe because (1) a release lost in a crash
         * only lets the lease run to its TTL, the state the holder had anyway, and (2) the next
         * acquire commits durably, and PostgreSQL's log is sequential, so that flush makes the
         * release durable too: no fencing token can repeat. Acquires and renewals are always durable:
         * on PostgreSQL their statements raise {@code synchronous_commit} to {@code on} for their own
         * transaction where the server, role or session has {@code off} or {@code local}.
         * A release with a {@link #lock} waiter queued is followed by the hand-off, a grant that commits
         * durably and so flushes the release too. Ignored on H2 and MariaDB (MariaDB's flush
         * policy is server-wide).
         */
        public Builder fastRelease(boolean fastRelease) {
            this.fastRelease = fastRelease;
            return this;
        }

        /**
         * Cohort hand-off (default 0, off): the {@link #lock} calls of this service for one name under
         * one owner wait in memory, in arrival order, and a release passes the lease to the first of
         * them without a statement, at most {@code max} times in a row; then the lease goes back to
         * the database, where the first waiter of any instance takes it, and one of the local callers
         * queues there for the others (so a waiter elsewhere waits for at most {@code max} local
         * hand-offs more than it would without). Calls of other owners always go through the
         * database: the row names its holder's owner, as without cohorts.
         *
         * <p>Every holder still gets a fencing token greater than every earlier holder's: the first
         * local hand-off of a database grant reserves a block of {@code max} tokens (one durable
         * statement), so the row shows the top of the block ({@link #find} shows a token above the
         * local holder's), each local holder takes the next token of it, and the next grant from
         * the database starts above it. A local holder gets the database grant as it stands: its
         * {@code acquiredAt} (when the grant began) and its expiry, in database time; when less than
         * half of the waiter's ttl is left, the hand-off renews the grant first (in the same
         * statement as the reservation, or one of its own). A call that only waits, and gives up,
         * changes nothing in the database. Renew and release a locally handed lease through this
         * service: another service does not know it (a release there is refused as not held). A
         * release or force-release of the name from another instance is seen here at the next
         * statement only: a local holder may start after it, and tokens fence it out as they fence
         * out any holder whose lease ended. {@link #release(Lease, Duration)} with a minimum hold
         * does not hand off.
         *
         * @param max local hand-offs of one database grant, 0 (off) to 10,000
         */
        public Builder localHandOffs(int max) {
            if (max < 0 || max > 10_000) {
                throw new IllegalArgumentException("localHandOffs must be 0 to 10000, not " + max);
            }
            this.localHandOffs = max;
            return this;
        }

        /**
         * Batched commits (default false): concurrent {@link #tryAcquire} calls of this service go to
         * the database as one multi-row acquire, and concurrent {@link #release(Lease)} calls as one
         * multi-row release, each one statement and one commit for up to 64 leases. A batch forms
         * only while a statement of its kind is in flight, so an idle service sends each call at
         * once, as the statement it sends without batching; a busy one commits many calls at the
         * cost of one (up to four statements of a kind in flight; another starts while one is in
         * flight once four calls wait for it). Each call keeps its own outcome (grant, refusal, release,
         * {@link LeaseNotHeldException}) and its semantics: the rules, tokens, durability and
         * hand-off to {@link #lock} waiters are those of the single-row statements. Calls of one
         * name are never in one batch; a batch locks its rows in name order, so batches of two
         * instances cannot deadlock each other. On PostgreSQL and MariaDB; ignored on H2 (embedded,
         * a statement there costs no round trip). Other calls ({@link #lock}, {@link #tryLock},
         * renewals, {@link #release(Lease, Duration)} with a minimum hold) are not batched.
         *
         * <p>What a caller gives up: its call may wait for a statement in flight to finish before
         * its own batch is sent (at most one statement's time when the database is healthy), and it
         * shares its statement's fate: a statement that stalls (a row locked elsewhere, a hanging
         * connection) holds up every call in it. A call of a name in flight waits for that
         * statement instead of taking another, so a stuck name does not take every statement;
         * calls of other names wait only while four statements are in flight. The calls of a batch
         * run on the thread that started it: use a data source that does not depend on the calling
         * thread (not a thread-bound routing data source).
         *
         * <p>Batching is not always faster: the database's group commit already shares the flush
         * between concurrent commits, batches keep fewer statements in flight, and a caller of a batch
         * waits for the statement in flight, then for its own. It pays off with many concurrent
         * callers on a slow-flushing database and can lose elsewhere; measure with your workload
         * ({@code docs/benchmarks.md} has the figures). With threads that take and release leases back
         * to back, see {@link #batchesInLockstep}.
         */
        public Builder batching(boolean batching) {
            this.batching = batching;
            return this;
        }

        /**
         * Tests and benchmarks: statements of each batched kind in flight at once, and how many calls
         * must be queued before another starts while one is in flight (defaults: 4 and 4; in
         * lockstep 1 and 1, shared by both kinds).
         */
        Builder batchesInFlight(int statements, int overlapAt) {
            this.batchesInFlight = statements;
            this.overlapAt = overlapAt;
            return this;
        }

        /**
         * Batches in lockstep (default {@link Duration#ZERO}, off; needs {@link #batching}): acquires
         * and releases share one statement in flight, and a batch that could start waits, at most
         * {@code linger} after the last batch ended, for the threads that batch answered to come back
         * with their next call, so that the calls of many threads that each take and release leases
         * in a loop go together in one statement, acquires in one and releases in the next. Only a
         * thread that came back within the linger the last time the same kind (acquire or release)
         * answered it is waited for: one that holds its lease a while before it releases it, or
         * works a while between its leases, delays nobody. A thread alone never waits for itself.
         *
         * <p>What a caller gives up, beyond {@link #batching}: a call may wait up to {@code linger}
         * for a thread that came back quickly the last time and does not this time, and only one
         * statement is in flight.
         *
         * <p>It goes together best when many threads take and release leases back to back, and
         * costs less CPU per acquire and release than the service without batching; it trails with
         * few threads and when threads hold their leases a while. Keep the linger well below the
         * time threads hold their leases, or batches wait for threads still holding theirs; measure
         * with your workload ({@code docs/benchmarks.md} has the figures).
         *
         * @param linger how long a batch waits for the threads the last batch answered: 0 (off) to 1 s
         * @throws IllegalArgumentException if {@code linger} is null, negative or longer than 1 s
         */
        public Builder batchesInLockstep(Duration linger) {
            Arguments.notNull(linger, "linger");
            if (linger.isNegative() || linger.compareTo(Duration.ofSeconds(1)) > 0) {
                throw new IllegalArgumentException("linger must be between 0 and 1 s: " + linger);
            }
            this.lockstepLingerNanos = linger.toNanos();
            return this;
        }

        /** Tests only: a lone call too goes as a batch (of one) through the multi-row statements. */
        Builder batchLoneCalls(boolean batchLoneCalls) {
            this.batchLoneCalls = batchLoneCalls;
            return this;
        }

        /** Tests only: the shortest and longest poll of a queued waiter that is not notified. */
        Builder queuedPoll(Duration min, Duration max) {
            this.minPollNanos = min.toNanos();
            this.maxQueuedPollNanos = max.toNanos();
            return this;
        }

        /** Tests only: how often a notified waiter re-checks anyway. */
        Builder safetyPoll(Duration interval) {
            this.safetyPollNanos = interval.toNanos();
            return this;
        }

        /**
         * The service.
         *
         * @throws IllegalStateException if {@link #batchesInLockstep} is set without {@link #batching}
         */
        public LeaseService build() {
            if (lockstepLingerNanos > 0 && !batching) {
                throw new IllegalStateException("batchesInLockstep(" + Duration.ofNanos(lockstepLingerNanos)
                        + ") needs batching(true)");
            }
            return new LeaseService(this);
        }
    }

    /** The dialect in use. */
    public Dialect dialect() {
        return dialect;
    }

    /** The lease table. */
    public String table() {
        return table;
    }

    // ---------------------------------------------------------------------------------------------
    // acquire

    @Override
    public Optional<Lease> tryAcquire(String name, String owner, Duration ttl) {
        checkName("Lease name", name);
        checkName("Lease owner", owner);
        long micros = ttlMicros(ttl);
        long sent = System.nanoTime();
        Optional<Lease> grant = batches != null ? batches.acquire(name, owner, micros) : acquireAlone(name, owner, micros);
        return grant.map(g -> observed(granted(g, sent), GrantPath.ACQUIRED));
    }

    /** The exclusive acquire in a statement of its own. */
    private Optional<Lease> acquireAlone(String name, String owner, long micros) {
        return acquire("acquiring", name, owner, c -> jdbc.acquire(c, name, owner, micros, false));
    }

    /** How a grant reached its caller (for {@link #grantObserver}). */
    enum GrantPath {
        /** {@code tryAcquire}'s statement, alone or in a batch, or a {@code lock} call with no wait. */
        ACQUIRED,
        /** A waiting {@code lock} call's own attempt (which may pick up a grant a release handed to it). */
        QUEUED_ATTEMPT,
        /** A release's hand-off, learned from its notification: no statement of the waiter's own. */
        HANDED_OFF,
        /** Passed on in memory by a holder of this service ({@link Builder#localHandOffs}). */
        PASSED_IN_MEMORY
    }

    /** Tests: told of each grant, on the caller's thread, before it is returned. */
    volatile @Nullable BiConsumer<Lease, GrantPath> grantObserver;

    private Lease observed(Lease grant, GrantPath path) {
        BiConsumer<Lease, GrantPath> observer = grantObserver;
        if (observer != null) {
            observer.accept(grant, path);
        }
        return grant;
    }

    /** Records a grant the database made to this service, for cohort hand-off; returns it. */
    private Lease granted(Lease grant, long sentNanos) {
        if (local != null) {
            local.granted(grant, sentNanos);
        }
        return grant;
    }

    @Override
    public boolean tryLock(String name, String owner, Duration ttl) {
        checkName("Lease name", name);
        checkName("Lease owner", owner);
        long micros = ttlMicros(ttl);
        if (local != null) {
            local.closeAll(name, owner); // it may renew (even shorten) a grant this service passes on
        }
        return acquire("acquiring", name, owner, c -> jdbc.acquire(c, name, owner, micros, true)).isPresent();
    }

    /**
     * Acquires {@code name}, waiting at most {@code maxWait} for the holder to release it or for its
     * lease to expire. Waiters queue in arrival order on every database, and a free lease goes only
     * to the first live waiter, so the releasing caller cannot take the lease straight back while
     * others wait. On PostgreSQL the release grants the lease to that waiter in its own transaction
     * and notifies it with the grant through {@code LISTEN/NOTIFY} (see {@link LeaseSql.PostgreSql}):
     * no polling, and no statement of the waiter's own to take the lease. A waiter that gives up
     * just as it is handed the lease gives it back before the call returns (if a connection comes
     * within 0.1 s, else in the background; if that fails, the grant runs out by its TTL). On H2
     * and MariaDB waiters poll with exponential backoff (1 to 5 ms) and jitter, each poll refreshing
     * its place: a free lease waits for the first waiter's next poll, except that a release through
     * this same service wakes its oldest waiting call at once. An expired holder is noticed within
     * 0.5 s on PostgreSQL, within the backoff elsewhere. (A call with no queue — {@code maxWait} zero — backs off to 50 ms.)
     *
     * <p>On PostgreSQL the first waiting call starts one listener thread that keeps one pooled
     * connection (LISTEN) until {@link #close()}; size the pool for it. Without pgjdbc on the class
     * path, or while that connection is down or not yet there, waiters poll as elsewhere (keeping
     * their queue order); a waiter never waits for the listener.
     *
     * <p>The bound covers waiting for a pooled connection too: with {@code maxWait > 0} each
     * attempt borrows its connection on a background thread and gives up at the bound (a
     * connection that comes later goes back to the pool), so an exhausted pool ends the call with
     * {@link LeaseTimeoutException} at {@code maxWait}, not at the pool's own timeout. Each attempt
     * may wait up to 0.1 s past {@code maxWait} for its connection: so every call makes at least
     * one attempt, however short its bound, and a waiter makes its last attempt at the bound. A
     * call that gives up after queueing leaves the queue before it returns if a connection comes
     * within 0.1 s more, else in the background (or its entry lapses within seconds).
     *
     * <p>Each call waits as a waiter of its own: concurrent calls of one owner queue separately and
     * never take each other's place or wake-up. With {@link Builder#localHandOffs} on, calls of this
     * service for the same name and owner instead wait in memory, in arrival order, and are passed
     * the lease without a statement; one of them at a time queues in the database for them.
     *
     * <p>Exclusive like {@link #tryAcquire}: a live grant, even one of {@code owner}, is waited for.
     *
     * @param maxWait zero tries once
     * @return the grant, as {@link #tryAcquire}
     * @throws LeaseTimeoutException if the lease was still held when {@code maxWait} ran out
     * @throws InterruptedException  if the thread was interrupted while waiting (nothing is held)
     * @throws DatabaseException     if the database failed
     * @throws IllegalStateException if this service was closed and {@code maxWait > 0} (a zero
     *                               bound, like {@link #tryAcquire}, still works after close)
     */
    @Override
    public Lease lock(String name, String owner, Duration ttl, Duration maxWait) throws InterruptedException {
        checkName("Lease name", name);
        checkName("Lease owner", owner);
        long micros = ttlMicros(ttl);
        long waitNanos = waitNanos(maxWait);
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        long deadline = System.nanoTime() + waitNanos;
        LocalHandOffs.Call cohort = local != null && waitNanos > 0 ? local.enter(name, owner, micros) : null;
        if (cohort != null) {
            Lease passed = local.await(cohort, deadline);
            if (passed != null) {
                return observed(passed, GrantPath.PASSED_IN_MEMORY);
            }
        }
        try {
            return lockInDatabase(name, owner, micros, maxWait, waitNanos, deadline);
        } finally {
            if (cohort != null) {
                local.leave(cohort);
            }
        }
    }

    /** {@link #lock} through the database: queued there in arrival order with every instance's calls. */
    private Lease lockInDatabase(String name, String owner, long micros, Duration maxWait, long waitNanos, long deadline)
            throws InterruptedException {
        // Never waits for the listener (its first connection may be long in coming): until it
        // listens, the waiter polls; when it starts listening it wakes every registered waiter.
        boolean notified = wakeUps != null && waitNanos > 0 && wakeUps.start();
        boolean viaQueue = waitNanos > 0;
        // This call's own queue entry and wake-up key: concurrent calls of one owner are separate waiters.
        String waiter = viaQueue ? newWaiterId() : null;
        String key = viaQueue ? PgWakeUps.key(name, waiter) : null;
        PgWakeUps.Waiter wakeUp = new PgWakeUps.Waiter();
        if (notified) {
            wakeUps.register(key, wakeUp);
        } else if (viaQueue) {
            localPollers.computeIfAbsent(name, n -> new ConcurrentLinkedDeque<>()).addLast(wakeUp);
        }
        // A notified waiter's entry outlives several safety polls, each of which refreshes it; a polling
        // waiter refreshes it every few milliseconds, so its entry (and one a failed call left behind,
        // which blocks the waiters behind it until it lapses) lives QUEUE_ENTRY_MICROS.
        long queueMicros = notified ? Math.max(QUEUE_ENTRY_MICROS, safetyPollNanos / 1000 * 4) : QUEUE_ENTRY_MICROS;
        boolean queued = false;
        int attempts = 0;
        int races = 0;
        long backoff = viaQueue ? minPollNanos : MIN_BACKOFF_NANOS;
        // Before the first attempt: no grant to this call is older. (Not the latest attempt's: on
        // PostgreSQL an attempt may pick up a grant a release handed to this waiter before it was sent.)
        long sent = System.nanoTime();
        try {
            while (true) {
                boolean joined = queued; // a waiter that never joined the queue has no entry to leave on a grant
                // Releases hand the lease only to a waiter whose notification a live listener will deliver.
                Integer listener = notified ? wakeUps.listenerPid() : null;
                SqlCall<Optional<Lease>> attempt = viaQueue
                        ? c -> jdbc.acquireOrQueue(c, name, owner, waiter, micros, queueMicros, joined, listener)
                        : c -> jdbc.acquire(c, name, owner, micros, false);
                Optional<Lease> granted;
                if (waitNanos == 0) {
                    attempts++;
                    granted = acquire("acquiring", name, owner, attempt);
                } else {
                    // Every attempt, the first and the one at the bound included, may take up to
                    // BORROW_GRACE past the bound to get its connection: otherwise a short bound
                    // could end without any attempt, and a waiter woken at the bound without its last one.
                    Connection borrowed = borrow(Math.max(deadline, System.nanoTime()) + BORROW_GRACE_NANOS);
                    if (borrowed == null) {
                        throw new LeaseTimeoutException(name, owner, maxWait, attempts);
                    }
                    attempts++;
                    granted = attemptOn(borrowed, attempt, name, owner, ++races >= ATTEMPTS_ON_RACE);
                    if (granted == null) {
                        continue; // lost a race (the statement had no effect): again at once, still bounded
                    }
                    races = 0;
                }
                if (granted.isPresent()) {
                    return observed(granted(granted.get(), sent), viaQueue ? GrantPath.QUEUED_ATTEMPT : GrantPath.ACQUIRED);
                }
                queued = viaQueue;
                Lease handed = handed(wakeUp, name, owner);
                if (handed != null) {
                    return observed(granted(handed, sent), GrantPath.HANDED_OFF);
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new LeaseTimeoutException(name, owner, maxWait, attempts);
                }
                if (notified && wakeUps.isListening()) {
                    long poll = safetyPollNanos - safetyPollNanos / 5
                            + ThreadLocalRandom.current().nextLong(safetyPollNanos * 2 / 5);
                    wakeUp.signal.tryAcquire(Math.min(left, poll), TimeUnit.NANOSECONDS);
                    wakeUp.signal.drainPermits();
                    handed = handed(wakeUp, name, owner);
                    if (handed != null) {
                        return observed(granted(handed, sent), GrantPath.HANDED_OFF);
                    }
                } else {
                    long sleep = backoff / 2 + ThreadLocalRandom.current().nextLong(backoff);
                    // A release through this service wakes its oldest polling waiter at once.
                    boolean woken = wakeUp.signal.tryAcquire(Math.min(left, sleep), TimeUnit.NANOSECONDS);
                    wakeUp.signal.drainPermits();
                    backoff = woken ? minPollNanos
                            : Math.min(viaQueue ? maxQueuedPollNanos : MAX_BACKOFF_NANOS, backoff * 2);
                }
            }
        } catch (InterruptedException | RuntimeException e) {
            // Also when no attempt is known to have queued: one that failed may have committed first.
            if (viaQueue && attempts > 0) {
                giveUp(name, waiter, System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(queueMicros));
            }
            throw e;
        } finally {
            if (notified) {
                wakeUps.unregister(key, wakeUp);
            } else if (viaQueue) {
                localPollers.computeIfPresent(name, (n, deque) -> {
                    deque.remove(wakeUp);
                    return deque.isEmpty() ? null : deque;
                });
            }
        }
    }

    /** Wakes this service's oldest polling waiter of {@code name}, if any: the lease may be free now. */
    private void wakeLocalPoller(String name) {
        ConcurrentLinkedDeque<PgWakeUps.Waiter> deque = localPollers.get(name);
        PgWakeUps.Waiter oldest = deque == null ? null : deque.peekFirst();
        if (oldest != null) {
            oldest.signal.release();
        }
    }

    /** The grant a release handed to this waiter (committed before it was notified), or null. */
    private Lease handed(PgWakeUps.Waiter wakeUp, String name, String owner) {
        PgWakeUps.Handed h = wakeUp.handed();
        if (h == null) {
            return null;
        }
        handOffsReceived.increment();
        return new Lease(name, owner, h.token(), h.acquiredAt(), h.expiresAt());
    }

    /** Tests: how many grants this service's waiters took from a hand-off's notification. */
    long handOffsReceived() {
        return handOffsReceived.sum();
    }

    /** Tests: how many times this service passed a lease on in memory. */
    long localHandOffs() {
        return local == null ? 0 : local.handOffs();
    }

    /** Tests: how many of this service's grants it keeps for cohort hand-off. */
    int localGrants() {
        return local == null ? 0 : local.recorded();
    }

    /** Tests: how many of this service's calls went to the database in multi-row batches. */
    long batchedCalls() {
        return batches == null ? 0 : batches.batchedCalls();
    }

    /** Tests and benchmarks: how many multi-row statements this service sent. */
    long multiRowStatements() {
        return batches == null ? 0 : batches.multiRowStatements();
    }

    /** Tests: how many of this service's calls are queued for a batch. */
    int queuedForBatches() {
        return batches == null ? 0 : batches.queued();
    }

    /** Tests: how many calls wait for this service's grant of {@code name} under {@code owner}. */
    int localWaiters(String name, String owner) {
        return local == null ? 0 : local.waiters(name, owner);
    }

    /** An unguessable id of one blocking call (128 random bits, base64url): its queue entry and wake-up key. */
    private static String newWaiterId() {
        byte[] bytes = new byte[16];
        WAITER_IDS.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /**
     * Runs one attempt on {@code c} (then closed): the grant or empty, or null if it lost a race
     * with a concurrent first insert or a deadlock (the statement had no effect) and is not the
     * {@code last} try.
     */
    private Optional<Lease> attemptOn(Connection c, SqlCall<Optional<Lease>> call, String name, String owner,
                                      boolean last) {
        try (c) {
            return Jdbc.autocommit(c, call::run);
        } catch (SQLException e) {
            if (!last && isRace(dialect.classify(e))) {
                return null;
            }
            throw new DatabaseException("acquiring lease '" + name + "' for '" + owner + "'", e);
        }
    }

    /**
     * A pooled connection, or null if none came before {@code deadline} ({@link System#nanoTime()}).
     * {@code getConnection()} cannot be bounded per call, so it runs on a background thread that
     * is interrupted when the caller gives up; a connection that arrives after that goes straight
     * back to the pool.
     *
     * @throws IllegalStateException if the service is closed
     */
    private Connection borrow(long deadline) throws InterruptedException {
        CompletableFuture<Connection> result = new CompletableFuture<>();
        Future<?> task;
        try {
            task = background().submit(() -> {
                try {
                    Connection c = dataSource.getConnection();
                    if (!result.complete(c)) {
                        closeQuietly(c);
                    }
                } catch (Throwable e) {
                    result.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) {
            throw new IllegalStateException("The lease service is closed", e);
        }
        try {
            return result.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException | InterruptedException e) {
            if (result.completeExceptionally(e)) {
                task.cancel(true);
                if (e instanceof InterruptedException ie) {
                    throw ie;
                }
                return null;
            }
            // The future completed just now, before our cancellation.
            Connection c;
            try {
                c = result.getNow(null);
            } catch (CompletionException | CancellationException failed) {
                if (e instanceof InterruptedException ie) {
                    throw ie;
                }
                throw borrowFailure(failed.getCause());
            }
            if (e instanceof InterruptedException ie) {
                closeQuietly(c); // the interrupt wins: nothing is held, and the flag's meaning is kept
                throw ie;
            }
            return c;
        } catch (ExecutionException e) {
            throw borrowFailure(e.getCause());
        }
    }

    private static RuntimeException borrowFailure(Throwable cause) {
        if (cause instanceof SQLException sql) {
            return new DatabaseException("borrowing a connection", sql);
        }
        if (cause instanceof RuntimeException r) {
            return r;
        }
        return new IllegalStateException(cause);
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException e) {
            // the pool discards it
        }
    }

    /**
     * Removes a waiter that gave up, giving back a grant a release handed to it meanwhile. It waits
     * at most {@link #BORROW_GRACE_NANOS} for a pooled connection (never the pool's own timeout: the
     * caller's bound and interrupt come first). If no connection comes or the statement fails (the
     * database restarting, a pooled connection it killed), a background thread tries again, after
     * 50 ms, then twice as long each time up to 1 s, until it succeeds or the entry would have
     * lapsed by itself: until then a release would hand the lease to the entry, and the grant
     * would wait out its TTL with nobody to take it.
     *
     * @param lapsesAt when the entry lapses at the latest ({@link System#nanoTime()})
     */
    private void giveUp(String name, String waiter, long lapsesAt) {
        Connection c = null;
        try {
            c = borrow(System.nanoTime() + BORROW_GRACE_NANOS);
        } catch (InterruptedException | RuntimeException e) {
            // tried again in the background
        }
        if (c == null || !gaveUp(c, name, waiter)) {
            giveUpLater(name, waiter, lapsesAt, GIVE_UP_RETRY_NANOS);
        }
    }

    /** One attempt to leave the queue on {@code c}, which it closes; false if it failed. */
    private boolean gaveUp(Connection c, String name, String waiter) {
        try (Connection own = c) {
            Jdbc.autocommit(own, cc -> {
                jdbc.giveUp(cc, name, waiter);
                return null;
            });
            return true;
        } catch (SQLException | RuntimeException e) {
            return false;
        }
    }

    private void giveUpLater(String name, String waiter, long lapsesAt, long delayNanos) {
        if (closed || System.nanoTime() + delayNanos - lapsesAt >= 0) {
            return; // the entry lapses first
        }
        try {
            timer().schedule(() -> background().execute(() -> {
                Connection c;
                try {
                    c = dataSource.getConnection();
                } catch (SQLException | RuntimeException e) {
                    c = null;
                }
                if (c == null || !gaveUp(c, name, waiter)) {
                    giveUpLater(name, waiter, lapsesAt, Math.min(delayNanos * 2, MAX_GIVE_UP_RETRY_NANOS));
                }
            }), delayNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // closed: the entry lapses by itself
        }
    }

    private Optional<Lease> acquire(String what, String name, String owner, SqlCall<Optional<Lease>> call) {
        return acquire(what, name, owner, call, null);
    }

    private static boolean isRace(SqlErrorKind kind) {
        return Retry.RACES.contains(kind);
    }

    /**
     * Runs {@code call}, on {@code first} if given (then closed), retrying a lost race on a new
     * connection: two first inserts of a new name (H2: 23505) or an InnoDB gap-lock deadlock had no
     * effect, and the next attempt sees the winner's row.
     */
    private Optional<Lease> acquire(String what, String name, String owner, SqlCall<Optional<Lease>> call,
                                    @Nullable Connection first) {
        return races.autocommit(dataSource, first, () -> what + " lease '" + name + "' for '" + owner + "'", call::run);
    }

    // ---------------------------------------------------------------------------------------------
    // renew and release

    @Override
    public Lease renew(Lease lease, Duration ttl) {
        checkLease(lease);
        long micros = ttlMicros(ttl);
        Optional<Instant> expiry = renewed(lease, micros, token -> call("renewing", lease.name(),
                c -> jdbc.renew(c, lease.name(), lease.owner(), token, micros)));
        if (expiry.isEmpty()) {
            throw notHeld("renew", lease.name(), lease.owner(), lease.token());
        }
        return new Lease(lease.name(), lease.owner(), lease.token(), lease.acquiredAt(), expiry.get());
    }

    /**
     * Runs a renewal of {@code lease} with the row's token: the lease's own, or for a lease passed on
     * in this service, its database grant's (under that grant's lock, whose expiry it records).
     */
    private Optional<Instant> renewed(Lease lease, long ttlMicros, java.util.function.LongFunction<Optional<Instant>> renewal) {
        LocalHandOffs.Held held = local == null ? null : local.hold(lease);
        if (held == null) {
            return renewal.apply(lease.token());
        }
        try {
            long sent = System.nanoTime();
            Optional<Instant> expiry = renewal.apply(held.rowToken());
            if (expiry.isPresent()) {
                held.renewed(expiry.get(), ttlMicros, sent);
            } else {
                held.lost();
            }
            return expiry;
        } finally {
            held.done();
        }
    }

    @Override
    public void release(Lease lease) {
        checkLease(lease);
        release(lease.name(), lease.owner(), lease.token());
    }

    @Override
    public void unlock(String name, String owner) {
        checkName("Lease name", name);
        checkName("Lease owner", owner);
        release(name, owner, null);
    }

    @Override
    public void release(Lease lease, Duration heldAtLeast) {
        checkLease(lease);
        if (heldAtLeast == null || heldAtLeast.isNegative() || heldAtLeast.compareTo(MAX_DURATION) > 0) {
            throw new IllegalArgumentException("heldAtLeast must be 0 to " + MAX_DURATION.toDays() + " days, not " + heldAtLeast);
        }
        release(lease.name(), lease.owner(), lease.token(), heldAtLeast.isZero() ? null : heldAtLeast.toNanos() / 1000);
    }

    private void release(String name, String owner, Long token) {
        release(name, owner, token, null);
    }

    private void release(String name, String owner, Long token, Long heldAtLeastMicros) {
        if (local != null) {
            if (token == null) {
                local.closeAll(name, owner); // any grant of the owner: no hand-offs of it any more
            } else {
                LocalHandOffs.Release decided = local.release(new Lease(name, owner, token, Instant.EPOCH, Instant.EPOCH),
                        heldAtLeastMicros != null);
                if (decided instanceof LocalHandOffs.HandedOn) {
                    return;
                }
                if (decided instanceof LocalHandOffs.AlreadyReleased already) {
                    Lease holder = already.current();
                    throw new LeaseNotHeldException(name, "Cannot release lease '" + name + "' for '" + owner
                            + "' (token " + token + "): it was already released and passed on within this service"
                            + " (now: " + describe(holder) + ")", holder, LeaseNotHeldException.Reason.RELEASED, null, null);
                }
                if (decided instanceof LocalHandOffs.ToDatabase grant) {
                    Long minimum = heldAtLeastMicros == null ? null : heldAtLeastMicros + grant.extraMicros();
                    // On a DatabaseException the outcome is unknown: the grant stays recorded for a retry.
                    try {
                        releaseInDatabase(name, owner, rowToken(name, owner, grant), minimum);
                    } catch (LeaseNotHeldException refused) {
                        local.releasedToDatabase(name, owner, grant.token());
                        throw refused;
                    }
                    local.releasedToDatabase(name, owner, grant.token());
                    return;
                }
            }
        }
        releaseInDatabase(name, owner, token, heldAtLeastMicros);
    }

    /**
     * The row's token of a grant to release: after a reservation with an unknown outcome, the
     * reserved one if the row still holds the grant (same owner and {@code acquiredAt}) with it.
     */
    private long rowToken(String name, String owner, LocalHandOffs.ToDatabase grant) {
        if (grant.unsureTokens() == 0) {
            return grant.token();
        }
        long reserved = grant.token() + grant.unsureTokens();
        return find(name).filter(row -> row.owner().equals(owner) && row.token() == reserved
                && row.acquiredAt().equals(grant.acquiredAt())).isPresent() ? reserved : grant.token();
    }

    private void releaseInDatabase(String name, String owner, Long token, Long heldAtLeastMicros) {
        boolean released = batches != null && token != null && heldAtLeastMicros == null
                ? batches.release(name, owner, token)
                : releasedInDatabase(name, owner, token, heldAtLeastMicros);
        if (!released) {
            throw notHeld("release", name, owner, token);
        }
        wakeLocalPoller(name);
    }

    /** Releases in one statement (and hands off to a waiter); true if the grant was held. */
    private boolean releasedInDatabase(String name, String owner, Long token, Long heldAtLeastMicros) {
        return call("releasing", name, c -> {
            boolean fast = fastRelease && c.getAutoCommit();
            return jdbc.release(c, name, owner, token, fast, heldAtLeastMicros);
        });
    }

    /** Releases a lease handed to a waiter that was interrupted meanwhile; if that fails, it runs out by its ttl. */
    private void releaseQuietly(Lease lease) {
        try {
            release(lease);
        } catch (LeaseNotHeldException | DatabaseException e) {
            // expired or taken over already; or unreachable: it expires by its ttl
        }
    }

    /** {@link #notHeld} for a refused renewal of a guard; null if the row cannot be read (the loss stands anyway). */
    LeaseNotHeldException diagnoseQuietly(Lease lease) {
        try {
            return notHeld("renew", lease.name(), lease.owner(), local == null ? lease.token() : local.rowToken(lease));
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** Reads the row to say precisely why a release or renewal matched nothing. */
    private LeaseNotHeldException notHeld(String action, String name, String owner, Long token) {
        Optional<LeaseJdbc.Diagnosis> row = call("diagnosing", name, c -> jdbc.diagnose(c, name));
        String mine = "'" + owner + "'" + (token == null ? "" : " (token " + token + ")");
        if (row.isEmpty()) {
            return new LeaseNotHeldException(name, "Cannot " + action + " lease '" + name + "' for " + mine
                    + ": there is no such lease", null, LeaseNotHeldException.Reason.NO_SUCH_LEASE, null, null);
        }
        Lease current = row.get().lease();
        boolean sameOwner = current.owner().equals(owner);
        String now = " (now: " + describe(current) + ")";
        if (sameOwner && (token == null || current.token() == token)) {
            if (current.isReleased()) {
                LeaseJdbc.Broken broken = row.get().broken();
                if (broken != null) {
                    String by = broken.by().isEmpty() ? null : broken.by();
                    return new LeaseNotHeldException(name, "Cannot " + action + " lease '" + name + "' for " + mine
                            + ": it was broken by " + (by == null ? "an operator" : by) + " at " + broken.at()
                            + now, current, LeaseNotHeldException.Reason.BROKEN, by, broken.at());
                }
                return new LeaseNotHeldException(name, "Cannot " + action + " lease '" + name + "' for " + mine
                        + ": it was already released" + now, current, LeaseNotHeldException.Reason.RELEASED, null, null);
            }
            return new LeaseExpiredException(name, "Cannot " + action + " lease '" + name + "' for " + mine
                    + ": it expired at " + current.expiresAt() + " (database time); the critical section may"
                    + " have overlapped another holder's" + now, current, LeaseNotHeldException.Reason.EXPIRED);
        }
        if (token != null && current.token() > token) {
            return new LeaseExpiredException(name, "Cannot " + action + " lease '" + name + "' for " + mine
                    + ": it expired and was granted again since" + now
                    + "; the critical section may have overlapped another holder's", current,
                    LeaseNotHeldException.Reason.GRANTED_AGAIN);
        }
        return new LeaseNotHeldException(name, "Cannot " + action + " lease '" + name + "' for " + mine
                + ": " + (sameOwner ? "no such grant" : "not the owner") + now, current,
                sameOwner ? LeaseNotHeldException.Reason.NO_SUCH_GRANT : LeaseNotHeldException.Reason.OTHER_OWNER,
                null, null);
    }

    private static String describe(Lease l) {
        return "owner '" + l.owner() + "', token " + l.token() + ", acquired " + l.acquiredAt()
                + (l.isReleased() ? ", released" : ", expires " + l.expiresAt());
    }

    // ---------------------------------------------------------------------------------------------
    // keep-alive

    @Override
    public LeaseGuard keepAlive(Lease lease, Duration ttl, Consumer<LeaseLostException> onLost) {
        checkLease(lease);
        ttlMicros(ttl);
        if (ttl.toMillis() < 3) {
            throw new IllegalArgumentException("A kept-alive lease needs a ttl of at least 3 ms, not " + ttl);
        }
        if (closed) {
            throw new IllegalStateException("The lease service is closed");
        }
        long sent = System.nanoTime();
        Lease renewed = renew(lease, ttl);
        return new LeaseGuard(this, renewed, ttl, sent, Thread.currentThread(), onLost);
    }

    /**
     * Background renewal, package-private for {@link LeaseGuard}: empty if the lease is no longer
     * held. The connection's network timeout is set to {@code boundMillis} for the statement and
     * restored before the connection goes back to the pool, so a renewal stuck on a stalled server
     * or a row lock ends (the driver then discards the connection). Waiting for a pooled connection
     * is bounded by the pool's own timeout only; the guard's deadline does not depend on either.
     * A driver without network timeouts ({@link SQLFeatureNotSupportedException}) renews unbounded.
     * A failure to restore the timeout after a failed renewal is added to that failure as suppressed.
     */
    Optional<Instant> renewQuietly(Lease lease, long ttlMicros, int boundMillis) {
        return renewed(lease, ttlMicros, token -> renewQuietly(lease, token, ttlMicros, boundMillis));
    }

    private Optional<Instant> renewQuietly(Lease lease, long token, long ttlMicros, int boundMillis) {
        try (Connection c = dataSource.getConnection()) {
            SqlWork<Optional<Instant>> renewal = () -> Jdbc.autocommit(c,
                    cc -> jdbc.renew(cc, lease.name(), lease.owner(), token, ttlMicros));
            int saved;
            try {
                saved = c.getNetworkTimeout();
                c.setNetworkTimeout(Runnable::run, boundMillis);
            } catch (SQLFeatureNotSupportedException unsupported) {
                return renewal.run(); // the driver cannot bound it: the guard's deadline still fires
            }
            SQLException failure = null;
            try {
                return renewal.run();
            } catch (SQLException e) {
                failure = e;
                throw e;
            } finally {
                try {
                    if (!c.isClosed()) {
                        c.setNetworkTimeout(Runnable::run, saved);
                    }
                } catch (SQLException restore) {
                    // e.g. a pool's proxy still open over a connection the driver aborted
                    if (failure == null) {
                        throw restore;
                    }
                    failure.addSuppressed(restore);
                }
            }
        } catch (SQLException e) {
            throw new DatabaseException("renewing lease '" + lease.name() + "'", e);
        }
    }

    /**
     * The guards' timer: it only schedules, marks guards lost and interrupts workers; it never
     * borrows a connection or runs a user's callback, so a deadline fires however stuck renewals are.
     */
    ScheduledExecutorService timer() {
        ScheduledExecutorService s = timer;
        if (s == null) {
            synchronized (this) {
                s = timer;
                if (s == null) {
                    rejectIfClosed();
                    ScheduledThreadPoolExecutor pool = new ScheduledThreadPoolExecutor(1,
                            daemon("holdfast-lease-timer-" + table));
                    pool.setRemoveOnCancelPolicy(true);
                    timer = s = pool;
                }
            }
        }
        return s;
    }

    /**
     * Runs renewals and {@code onLost} callbacks, each on a thread of its own (threads are reused
     * and end after a minute idle), so one stuck renewal or callback delays no other guard. A
     * guard has at most one renewal running.
     */
    ExecutorService background() {
        ExecutorService s = background;
        if (s == null) {
            synchronized (this) {
                s = background;
                if (s == null) {
                    rejectIfClosed();
                    background = s = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS,
                            new SynchronousQueue<>(), daemon("holdfast-lease-keepalive-" + table));
                }
            }
        }
        return s;
    }

    /** After {@link #close}, no pool starts again: callers see what a shut-down pool would tell them. */
    private void rejectIfClosed() {
        if (closed) {
            throw new RejectedExecutionException("The lease service is closed");
        }
    }

    private static ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    // ---------------------------------------------------------------------------------------------
    // operators

    @Override
    public List<Lease> list() {
        return call("listing", "*", jdbc::listLive);
    }

    @Override
    public Optional<Lease> find(String name) {
        checkName("Lease name", name);
        return call("reading", name, c -> jdbc.read(c, name));
    }

    @Override
    public boolean forceRelease(String name) {
        checkName("Lease name", name);
        return forceReleased(name, call("force-releasing", name, c -> jdbc.forceRelease(c, name, null)));
    }

    @Override
    public boolean forceRelease(String name, String by) {
        checkName("Lease name", name);
        checkName("Lease by", by);
        return forceReleased(name, call("force-releasing", name, c -> jdbc.forceRelease(c, name, by)));
    }

    private boolean forceReleased(String name, boolean released) {
        if (local != null) {
            local.closeAll(name, null);
        }
        if (released) {
            wakeLocalPoller(name);
        }
        return released;
    }

    /** Stops the background threads (the listener connection goes back to the pool). Leases stay as they are. */
    @Override
    public void close() {
        closed = true;
        if (local != null) {
            local.closeAll();
        }
        if (wakeUps != null) {
            wakeUps.close();
        }
        ScheduledExecutorService t;
        ExecutorService b;
        synchronized (this) { // a pool is created under this lock, after a check of closed
            t = timer;
            b = background;
        }
        if (t != null) {
            t.shutdownNow();
        }
        if (b != null) {
            b.shutdownNow();
        }
    }

    // ---------------------------------------------------------------------------------------------
    // plumbing

    @FunctionalInterface
    interface SqlCall<T> {
        T run(Connection c) throws SQLException;
    }

    @FunctionalInterface
    private interface SqlWork<T> {
        T run() throws SQLException;
    }

    private <T> T call(String what, String name, SqlCall<T> call) {
        return Jdbc.autocommit(dataSource, () -> what + " lease '" + name + "'", call::run);
    }

    static void checkName(String what, @Nullable String value) {
        Names.require(what, value, MAX_NAME_LENGTH);
    }

    static long ttlMicros(Duration ttl) {
        if (ttl == null) {
            throw new IllegalArgumentException("Lease ttl must not be null");
        }
        if (ttl.compareTo(MAX_DURATION) > 0) {
            throw new IllegalArgumentException("Lease ttl must be at most " + MAX_DURATION.toDays() + " days, not " + ttl);
        }
        if (ttl.isNegative() || ttl.toNanos() < MIN_TTL_MILLIS * 1_000_000) {
            throw new IllegalArgumentException("Lease ttl must be at least " + MIN_TTL_MILLIS + " ms, not " + ttl);
        }
        return ttl.toNanos() / 1000;
    }

    static long waitNanos(Duration maxWait) {
        if (maxWait == null) {
            throw new IllegalArgumentException("maxWait must not be null");
        }
        if (maxWait.isNegative()) {
            throw new IllegalArgumentException("maxWait must not be negative, not " + maxWait);
        }
        if (maxWait.compareTo(MAX_DURATION) > 0) {
            throw new IllegalArgumentException("maxWait must be at most " + MAX_DURATION.toDays() + " days, not " + maxWait);
        }
        return maxWait.toNanos();
    }

    private static void checkLease(Lease lease) {
        if (lease == null) {
            throw new IllegalArgumentException("lease must not be null");
        }
        checkName("Lease name", lease.name());
        checkName("Lease owner", lease.owner());
    }
}
