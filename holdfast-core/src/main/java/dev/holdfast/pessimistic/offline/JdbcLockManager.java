package dev.holdfast.pessimistic.offline;

import dev.holdfast.internal.Arguments;
import dev.holdfast.internal.Invariants;
import dev.holdfast.jdbc.CommitDurability;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SqlIdentifier;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.jdbc.dialect.SqlErrorKind;
import dev.holdfast.jdbc.internal.Jdbc;
import dev.holdfast.jdbc.internal.Names;
import dev.holdfast.jdbc.internal.Retry;
import org.jspecify.annotations.Nullable;

import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import javax.sql.DataSource;

/**
 * {@link LockManager} over a locks table (create it with
 * {@code new SchemaInstaller(dataSource).install(HoldfastTable.OFFLINE_LOCKS, name)}).
 *
 * <pre>{@code
 * JdbcLockManager locks = JdbcLockManager.builder(dataSource)
 *         .defaultExpiry(Duration.ofMinutes(5))
 *         .ownerBinding(true)
 *         .build();
 * }</pre>
 *
 * <p><b>One statement per call, on its own connection.</b> Every call borrows a connection,
 * runs one statement in autocommit mode and returns the connection: it commits independently of
 * any transaction the caller has open (pass a plain pool, not a transaction-aware proxy). The
 * decision of {@code tryLock}, {@code checkLock}, {@code releaseLock} and
 * {@code extendLockExpiration} is that one atomic statement. When a release or an extension is
 * refused, one more read finds out why (expired, released, foreign), only on that refusal path.
 * {@code tryLock} learns who holds a live lock from its own upsert's returned row. Two rare cases
 * repeat the statement (at most {@value #ATTEMPTS} attempts): H2 reports a concurrent insert of the
 * same new resource as a unique violation, and MariaDB may choose it as a deadlock victim against
 * a purge.
 *
 * <p><b>Database time.</b> Every expiry is computed and compared by the database's clock
 * ({@link Dialect#clock()}); the application's clock is never used.
 *
 * <p><b>Operators</b> get {@link #holder}, {@link #heldLocks}, {@link #forceRelease} and
 * {@link #purgeExpired}/{@link #purgeAllExpired}. None of them reveals a lock id.
 *
 * <p>Thread-safe; keep one per table.
 */
public final class JdbcLockManager implements LockManager {

    /** How often a statement is tried when the database reports a transient conflict. */
    static final int ATTEMPTS = 3;

    private final DataSource dataSource;
    private final Dialect dialect;
    private final String table;
    private final Duration defaultExpiry;
    private final Duration maxExpiry;
    private final boolean ownerBinding;
    private final CommitDurability durability;
    private final SecureRandom random;
    private final OfflineLockSql sql;
    private final String tryLockSql;
    private final String checkSql;
    private final String endedSql;
    private final String releaseSql;
    private final String releaseOwnedSql;
    private final String extendSql;
    private final String extendOwnedSql;
    private final String replaceOwnSql;
    private final AtomicLong retries = new java.util.concurrent.atomic.AtomicLong();
    /** A lost race of two first acquires, a deadlock victim: the statement had no effect, repeat it. */
    private final Retry races;
    /** Purges repeat only a deadlock victim. */
    private final Retry deadlocks;
    /** Where the {@link LockManager} calls go: the own ones, or the decorators around them. */
    private final LockManager calls;

    private JdbcLockManager(Builder b, Dialect dialect) {
        this.dataSource = b.dataSource;
        this.dialect = dialect;
        this.table = b.table;
        this.defaultExpiry = b.defaultExpiry;
        this.maxExpiry = b.maxExpiry;
        this.ownerBinding = b.ownerBinding;
        this.durability = b.durability;
        this.random = b.random;
        this.sql = OfflineLockSql.forDialect(dialect, table);
        boolean relaxed = durability == CommitDurability.RELAXED;
        this.tryLockSql = sql.tryLock(relaxed);
        this.checkSql = sql.check();
        this.endedSql = sql.ended();
        this.releaseSql = sql.release(false, relaxed);
        this.releaseOwnedSql = sql.release(true, relaxed);
        this.extendSql = sql.extend(false);
        this.extendOwnedSql = sql.extend(true);
        this.replaceOwnSql = sql.replaceOwn(relaxed);
        this.races = new Retry(dialect, Retry.RACES, ATTEMPTS, retries::incrementAndGet);
        this.deadlocks =
                new Retry(dialect, java.util.Set.of(SqlErrorKind.DEADLOCK), ATTEMPTS, retries::incrementAndGet);
        LockManager decorated = new Direct();
        for (UnaryOperator<LockManager> decorator : b.decorators) {
            decorated = Invariants.nonNull(decorator.apply(decorated), "a decorator returned null");
        }
        this.calls = decorated;
    }

    /**
     * {@return a builder over {@code dataSource}, with the defaults each of its settings names}
     *
     * @param dataSource the pool that lends a connection to each call: a plain (not
     *                   transaction-aware) pool; not null
     * @throws IllegalArgumentException if {@code dataSource} is null
     */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /** {@return the dialect of the locks table's database} */
    public Dialect dialect() {
        return dialect;
    }

    /** {@return the locks table's name, optionally schema-qualified} */
    public String table() {
        return table;
    }

    /** {@return the expiry of a lock taken or re-acquired without an explicit one} */
    public Duration defaultExpiry() {
        return defaultExpiry;
    }

    /** {@return whether {@code tryLock}, {@code reacquire} and releases wait for a durable commit} */
    public CommitDurability durability() {
        return durability;
    }

    /** {@return whether owner binding is on: the owner-less forms then raise {@link IllegalStateException}} */
    public boolean ownerBinding() {
        return ownerBinding;
    }

    // ---------------------------------------------------------------- the classic operations

    @Override
    public LockId tryLock(String type, String id) {
        return calls.tryLock(type, id);
    }

    @Override
    public LockId tryLock(String type, String id, String owner) {
        return calls.tryLock(type, id, owner);
    }

    @Override
    public LockId tryLock(String type, String id, String owner, Duration expiry) {
        return calls.tryLock(type, id, owner, expiry);
    }

    @Override
    public Reacquired reacquire(String type, String id, String owner) {
        return calls.reacquire(type, id, owner);
    }

    /**
     * {@inheritDoc}
     *
     * <p>One statement when the lock is free; when the owner holds it, a second one that gives the live
     * row a new id in place (so two tabs racing leave exactly one id: the row's). If the owner's lock
     * ends between the two, the call starts over (at most {@value #ATTEMPTS} times).
     */
    @Override
    public Reacquired reacquire(String type, String id, String owner, Duration expiry) {
        return calls.reacquire(type, id, owner, expiry);
    }

    @Override
    public void checkLock(LockId lockId) {
        calls.checkLock(lockId);
    }

    @Override
    public void checkLock(LockId lockId, String type, String id) {
        calls.checkLock(lockId, type, id);
    }

    @Override
    public void checkLock(LockId lockId, String type, String id, String owner) {
        calls.checkLock(lockId, type, id, owner);
    }

    @Override
    public void releaseLock(LockId lockId) {
        calls.releaseLock(lockId);
    }

    @Override
    public void releaseLock(LockId lockId, String owner) {
        calls.releaseLock(lockId, owner);
    }

    @Override
    public void extendLockExpiration(LockId lockId, long incMillis) {
        calls.extendLockExpiration(lockId, incMillis);
    }

    @Override
    public void extendLockExpiration(LockId lockId, Duration increment) {
        calls.extendLockExpiration(lockId, increment);
    }

    @Override
    public void extendLockExpiration(LockId lockId, String owner, Duration increment) {
        calls.extendLockExpiration(lockId, owner, increment);
    }

    private LockId acquire(String type, String id, @Nullable String owner, Duration expiry) {
        Names.require("type", type, MAX_TYPE_LENGTH);
        Names.require("id", id, MAX_ID_LENGTH);
        long micros = Durations.micros(Durations.positive("expiry", expiry, maxExpiry));
        LockId lockId = LockId.generate(random);
        return races.autocommit(dataSource, null, () -> "tryLock " + type + " " + id, c -> {
            try (PreparedStatement ps = c.prepareStatement(tryLockSql)) {
                ps.setString(1, type);
                ps.setString(2, id);
                ps.setString(3, lockId.getValue());
                ps.setString(4, owner);
                ps.setLong(5, micros);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        throw new IllegalStateException("tryLock upsert returned no row");
                    }
                    if (lockId.getValue().equals(rs.getString(1))) {
                        return lockId;
                    }
                    throw new AlreadyLockedException(
                            type, id, rs.getString(2), notNullInstant(rs, 3), notNullInstant(rs, 4));
                }
            }
        });
    }

    private void release(LockId lockId, @Nullable String owner) {
        int updated = update("releaseLock", owner == null ? releaseSql : releaseOwnedSql, ps -> {
            ps.setString(1, lockId.getValue());
            if (owner != null) {
                ps.setString(2, owner);
            }
        });
        if (updated == 0) {
            explainRefusal(lockId, owner);
        }
    }

    private void extend(LockId lockId, @Nullable String owner, Duration increment) {
        long micros = Durations.micros(Durations.positive("increment", increment, maxExpiry));
        long maxMicros = Durations.micros(maxExpiry);
        int updated = update("extendLockExpiration", owner == null ? extendSql : extendOwnedSql, ps -> {
            ps.setLong(1, micros);
            ps.setLong(2, maxMicros);
            ps.setString(3, lockId.getValue());
            if (owner != null) {
                ps.setString(4, owner);
            }
        });
        if (updated == 0) {
            explainRefusal(lockId, owner);
        }
    }

    /** The update refused; read the row to say why. Always throws. */
    private void explainRefusal(LockId lockId, @Nullable String owner) {
        verify(lockId, null, null, owner);
        // The row was live and matching when read, yet the update found nothing: it changed in
        // between (released and re-taken). The caller's lock is gone either way.
        throw new LockNotHeldException();
    }

    /** Reads the lock by id and throws unless it is live and matches what is given (null = any). */
    // False positive: the work returns null as its Void result; NullAway sees type arguments' nullness
    // only in JSpecify mode, which needs a newer javac than Java 17's.
    @SuppressWarnings("NullAway")
    private void verify(LockId lockId, @Nullable String type, @Nullable String id, @Nullable String owner) {
        Jdbc.autocommit(dataSource, "checkLock", c -> {
            try (PreparedStatement ps = c.prepareStatement(checkSql)) {
                ps.setString(1, lockId.getValue());
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        throw ended(c, lockId, type, id, owner);
                    }
                    String lockedType = rs.getString(1);
                    String lockedId = rs.getString(2);
                    String lockedOwner = rs.getString(3);
                    Instant expiresAt = notNullInstant(rs, 5);
                    boolean live = rs.getInt(6) == 1;
                    if (type != null && !(type.equals(lockedType) && Objects.equals(id, lockedId))) {
                        throw new ForeignLockException(
                                ForeignLockException.Reason.OTHER_RESOURCE,
                                "This lock id is not for " + type + " " + id);
                    }
                    if (owner != null && !owner.equals(lockedOwner)) {
                        throw new ForeignLockException(
                                ForeignLockException.Reason.OTHER_OWNER,
                                "This lock on " + lockedType + " " + lockedId + " is not held by " + owner);
                    }
                    if (!live) {
                        throw new LockExpiredException(lockedType, lockedId, expiresAt);
                    }
                }
            }
            return null;
        });
    }

    /**
     * Why no row holds {@code lockId} any more: the ended lock the id names, with who holds its resource
     * now; a foreign one if it was someone else's or for something else; else unknown.
     */
    private LockNotHeldException ended(
            Connection c, LockId lockId, @Nullable String type, @Nullable String id, @Nullable String owner)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(endedSql)) {
            ps.setString(1, lockId.getValue());
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return new LockNotHeldException();
                }
                String lockedType = rs.getString(1);
                String lockedId = rs.getString(2);
                String endedOwner = rs.getString(3);
                if (type != null && !(type.equals(lockedType) && Objects.equals(id, lockedId))) {
                    return new ForeignLockException(
                            ForeignLockException.Reason.OTHER_RESOURCE, "This lock id is not for " + type + " " + id);
                }
                if (owner != null && !owner.equals(endedOwner)) {
                    return new ForeignLockException(
                            ForeignLockException.Reason.OTHER_OWNER,
                            "This lock on " + lockedType + " " + lockedId + " was not held by " + owner);
                }
                HeldLock holder = rs.getInt(10) == 1
                        ? new HeldLock(
                                lockedType, lockedId, rs.getString(7), notNullInstant(rs, 8), notNullInstant(rs, 9))
                        : null;
                return new LockEndedException(
                        lockedType,
                        lockedId,
                        LockEndedException.Reason.valueOf(rs.getString(4)),
                        rs.getString(5),
                        notNullInstant(rs, 6),
                        holder);
            }
        }
    }

    // ---------------------------------------------------------------- operators

    /**
     * {@return the live lock on {@code type}/{@code id}, if any: who holds it and until when}
     *
     * @param type the kind of resource: 1 to {@value LockManager#MAX_TYPE_LENGTH} characters
     * @param id   the resource's id within its type: 1 to {@value LockManager#MAX_ID_LENGTH} characters
     * @throws IllegalArgumentException for a bad type or id
     */
    public Optional<HeldLock> holder(String type, String id) {
        Names.require("type", type, MAX_TYPE_LENGTH);
        Names.require("id", id, MAX_ID_LENGTH);
        List<HeldLock> found = query("holder", sql.holder(), ps -> {
            ps.setString(1, type);
            ps.setString(2, id);
        });
        return found.stream().findFirst();
    }

    /**
     * Live locks, soonest expiry first.
     *
     * @param type  only this type, or null for all
     * @param owner only this owner, or null for all
     * @param limit at most this many (1 to 10,000)
     * @return the live locks, at most {@code limit}; empty if there are none
     * @throws IllegalArgumentException for an invalid type, owner or limit
     */
    public List<HeldLock> heldLocks(@Nullable String type, @Nullable String owner, int limit) {
        if (type != null) {
            Names.require("type", type, MAX_TYPE_LENGTH);
        }
        if (owner != null) {
            Names.require("owner", owner, MAX_OWNER_LENGTH);
        }
        if (limit < 1 || limit > 10_000) {
            throw new IllegalArgumentException("limit must be 1 to 10000, not " + limit);
        }
        return query("heldLocks", sql.held(type != null, owner != null), ps -> {
            int i = 1;
            if (type != null) {
                ps.setString(i++, type);
            }
            if (owner != null) {
                ps.setString(i++, owner);
            }
            ps.setInt(i, limit);
        });
    }

    /**
     * Live locks a page at a time, by type and then id: a stable order to page through (unlike
     * {@link #heldLocks(String, String, int)}'s expiry, which extensions move). The next page starts
     * after the last lock of this one; a lock taken or released meanwhile shows or not as it falls.
     *
     * @param type      only this type, or null for all
     * @param owner     only this owner, or null for all
     * @param afterType the type of the last lock of the previous page; null (with {@code afterId})
     *                  for the first page
     * @param afterId   the id of the last lock of the previous page; null for the first page
     * @param limit     at most this many (1 to 10,000)
     * @return the next page of live locks, at most {@code limit}; empty after the last page
     * @throws IllegalArgumentException for an invalid name or limit, or only one of
     *                                  {@code afterType} and {@code afterId}
     */
    public List<HeldLock> heldLocksAfter(
            @Nullable String type,
            @Nullable String owner,
            @Nullable String afterType,
            @Nullable String afterId,
            int limit) {
        if ((afterType == null) != (afterId == null)) {
            throw new IllegalArgumentException("afterType and afterId go together: both null or both given");
        }
        if (type != null) {
            Names.require("type", type, MAX_TYPE_LENGTH);
        }
        if (owner != null) {
            Names.require("owner", owner, MAX_OWNER_LENGTH);
        }
        if (afterType != null) {
            Names.require("afterType", afterType, MAX_TYPE_LENGTH);
            Names.require("afterId", afterId, MAX_ID_LENGTH);
        }
        if (limit < 1 || limit > 10_000) {
            throw new IllegalArgumentException("limit must be 1 to 10000, not " + limit);
        }
        return query("heldLocksAfter", sql.heldByResource(type != null, owner != null, afterType != null), ps -> {
            int i = 1;
            if (type != null) {
                ps.setString(i++, type);
            }
            if (owner != null) {
                ps.setString(i++, owner);
            }
            if (afterType != null) {
                ps.setString(i++, afterType);
                ps.setString(i++, afterType);
                ps.setString(i++, afterId);
            }
            ps.setInt(i, limit);
        });
    }

    /**
     * Breaks the live lock on {@code type}/{@code id}, whoever holds it, without naming the operator;
     * see {@link #forceRelease(String, String, String)}.
     *
     * @param type the kind of resource: 1 to {@value LockManager#MAX_TYPE_LENGTH} characters
     * @param id   the resource's id within its type: 1 to {@value LockManager#MAX_ID_LENGTH} characters
     * @return whether there was a live lock to break
     * @throws IllegalArgumentException for a bad type or id
     */
    public boolean forceRelease(String type, String id) {
        return breakLock(type, id, null);
    }

    /**
     * Breaks the live lock on {@code type}/{@code id}, whoever holds it: its lock id stops
     * authorizing anything at once, and a later use of it is told {@code by} broke it, and when
     * ({@link LockEndedException}). Durable.
     *
     * @param type the kind of resource: 1 to {@value LockManager#MAX_TYPE_LENGTH} characters
     * @param id   the resource's id within its type: 1 to {@value LockManager#MAX_ID_LENGTH} characters
     * @param by   the operator, as the lock's owner will read it: 1 to
     *             {@value LockManager#MAX_OWNER_LENGTH} characters
     * @return whether there was a live lock to break
     * @throws IllegalArgumentException for a bad type, id or operator
     */
    public boolean forceRelease(String type, String id, String by) {
        return breakLock(type, id, Names.require("by", by, MAX_OWNER_LENGTH));
    }

    private boolean breakLock(String type, String id, @Nullable String by) {
        Names.require("type", type, MAX_TYPE_LENGTH);
        Names.require("id", id, MAX_ID_LENGTH);
        return update("forceRelease", sql.forceRelease(), ps -> {
                    ps.setString(1, by);
                    ps.setString(2, type);
                    ps.setString(3, id);
                })
                > 0;
    }

    /**
     * Deletes at most {@code maxRows} expired or released rows in one short autocommit
     * transaction. Rows an acquirer is taking over at that moment are skipped (PostgreSQL) or
     * waited for briefly; acquirers of other resources are never blocked.
     *
     * @param maxRows 1 to 100,000; a few hundred keeps each transaction to milliseconds
     * @return how many rows were deleted
     * @throws IllegalArgumentException if {@code maxRows} is out of range
     */
    public int purgeExpired(int maxRows) {
        if (maxRows < 1 || maxRows > 100_000) {
            throw new IllegalArgumentException("maxRows must be 1 to 100000, not " + maxRows);
        }
        return deadlocks.autocommit(dataSource, null, () -> "purging expired locks", c -> purge(c, maxRows));
    }

    /**
     * One purge batch. MariaDB runs it under READ COMMITTED (no gap locks, so acquirers inserting rows
     * are never blocked by it); the isolation cannot be scoped to a statement ({@code SET STATEMENT}
     * refuses it, 1971), so it is set on the connection and restored on every path.
     */
    private int purge(Connection c, int maxRows) throws SQLException {
        int isolation = c.getTransactionIsolation();
        boolean switchIsolation = sql.purgeNeedsReadCommitted() && isolation != Connection.TRANSACTION_READ_COMMITTED;
        if (switchIsolation) {
            c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        }
        try (PreparedStatement ps = c.prepareStatement(sql.purgeSql())) {
            ps.setInt(1, maxRows);
            return ps.executeUpdate();
        } finally {
            if (switchIsolation) {
                c.setTransactionIsolation(isolation);
            }
        }
    }

    /**
     * Purges in batches of {@code batchSize} until a batch finds fewer rows, each batch its own
     * transaction.
     *
     * @param batchSize the most rows one batch deletes, as {@link #purgeExpired(int)}'s
     *                  {@code maxRows}: 1 to 100,000
     * @return how many rows were deleted in all
     * @throws IllegalArgumentException if {@code batchSize} is out of range
     */
    public long purgeAllExpired(int batchSize) {
        long total = 0;
        int deleted;
        do {
            deleted = purgeExpired(batchSize);
            total += deleted;
        } while (deleted == batchSize);
        return total;
    }

    /** {@return how many statements were repeated after a transient conflict (see the class description)} */
    public long retries() {
        return retries.get();
    }

    // ---------------------------------------------------------------- plumbing

    private void requireUnbound(String call) {
        if (ownerBinding) {
            throw new IllegalStateException("Owner binding is on: call the " + call + " form that takes the owner");
        }
    }

    private static LockId requireLockId(LockId lockId) {
        if (lockId == null) {
            throw new IllegalArgumentException("lockId must not be null");
        }
        return lockId;
    }

    private interface Binder {
        void bind(PreparedStatement ps) throws SQLException;
    }

    /**
     * One auto-commit update of one lock row; a deadlock victim (MariaDB: with a purge batch, which locks
     * the expiry index before the rows) had no effect and runs again.
     */
    private int update(String what, String statement, Binder binder) {
        return deadlocks.autocommit(dataSource, null, () -> what, c -> {
            try (PreparedStatement ps = c.prepareStatement(statement)) {
                binder.bind(ps);
                return ps.executeUpdate();
            }
        });
    }

    /**
     * An instant from a column that is never NULL in the row read: acquired_at and expires_at are NOT
     * NULL, and ended_at is written together with the ended_lock_id a row is found by.
     */
    private Instant notNullInstant(ResultSet rs, int column) throws SQLException {
        return Invariants.nonNull(dialect.readInstant(rs, column), "NULL instant in column " + column);
    }

    private List<HeldLock> query(String what, String statement, Binder binder) {
        return Jdbc.autocommit(dataSource, what, c -> {
            try (PreparedStatement ps = c.prepareStatement(statement)) {
                binder.bind(ps);
                List<HeldLock> locks = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        locks.add(new HeldLock(
                                rs.getString(1),
                                rs.getString(2),
                                rs.getString(3),
                                notNullInstant(rs, 4),
                                notNullInstant(rs, 5)));
                    }
                }
                return locks;
            }
        });
    }

    /** The lock manager's own calls, before any {@link Builder#decoratedBy decorator}. */
    private final class Direct implements LockManager {

        @Override
        public LockId tryLock(String type, String id) {
            requireUnbound("tryLock");
            return acquire(type, id, null, defaultExpiry);
        }

        @Override
        public LockId tryLock(String type, String id, String owner) {
            return tryLock(type, id, owner, defaultExpiry);
        }

        @Override
        public LockId tryLock(String type, String id, String owner, Duration expiry) {
            Names.require("owner", owner, MAX_OWNER_LENGTH);
            return acquire(type, id, owner, expiry);
        }

        @Override
        public Reacquired reacquire(String type, String id, String owner) {
            return reacquire(type, id, owner, defaultExpiry);
        }

        @Override
        public Reacquired reacquire(String type, String id, String owner, Duration expiry) {
            Names.require("owner", owner, MAX_OWNER_LENGTH);
            long micros = Durations.micros(Durations.positive("expiry", expiry, maxExpiry));
            for (int attempt = 1; ; attempt++) {
                try {
                    return new Reacquired(acquire(type, id, owner, expiry), false);
                } catch (AlreadyLockedException e) {
                    if (!owner.equals(e.owner().orElse(null)) || attempt >= ATTEMPTS) {
                        throw e;
                    }
                }
                LockId fresh = LockId.generate(random);
                int replaced = update("reacquire " + type + " " + id, replaceOwnSql, ps -> {
                    ps.setString(1, fresh.getValue());
                    ps.setLong(2, micros);
                    ps.setString(3, type);
                    ps.setString(4, id);
                    ps.setString(5, owner);
                });
                if (replaced == 1) {
                    return new Reacquired(fresh, true);
                }
                // The owner's lock ended since it was seen (released, expired, broken): take it anew.
                retries.incrementAndGet();
            }
        }

        @Override
        public void checkLock(LockId lockId) {
            requireUnbound("checkLock");
            verify(requireLockId(lockId), null, null, null);
        }

        @Override
        public void checkLock(LockId lockId, String type, String id) {
            requireUnbound("checkLock");
            verify(
                    requireLockId(lockId),
                    Names.require("type", type, MAX_TYPE_LENGTH),
                    Names.require("id", id, MAX_ID_LENGTH),
                    null);
        }

        @Override
        public void checkLock(LockId lockId, String type, String id, String owner) {
            verify(
                    requireLockId(lockId),
                    Names.require("type", type, MAX_TYPE_LENGTH),
                    Names.require("id", id, MAX_ID_LENGTH),
                    Names.require("owner", owner, MAX_OWNER_LENGTH));
        }

        @Override
        public void releaseLock(LockId lockId) {
            requireUnbound("releaseLock");
            release(requireLockId(lockId), null);
        }

        @Override
        public void releaseLock(LockId lockId, String owner) {
            release(requireLockId(lockId), Names.require("owner", owner, MAX_OWNER_LENGTH));
        }

        @Override
        public void extendLockExpiration(LockId lockId, long incMillis) {
            requireUnbound("extendLockExpiration");
            if (incMillis <= 0 || incMillis > maxExpiry.toMillis()) {
                throw new IllegalArgumentException(
                        "increment must be 1 to " + maxExpiry.toMillis() + " ms, not " + incMillis);
            }
            extend(requireLockId(lockId), null, Duration.ofMillis(incMillis));
        }

        @Override
        public void extendLockExpiration(LockId lockId, Duration increment) {
            requireUnbound("extendLockExpiration");
            extend(requireLockId(lockId), null, increment);
        }

        @Override
        public void extendLockExpiration(LockId lockId, String owner, Duration increment) {
            extend(requireLockId(lockId), Names.require("owner", owner, MAX_OWNER_LENGTH), increment);
        }
    }

    /** Configuration of a {@link JdbcLockManager}. */
    public static final class Builder {
        private final DataSource dataSource;
        private @Nullable Dialect dialect;
        private String table = HoldfastTable.OFFLINE_LOCKS.defaultName();
        private Duration defaultExpiry = Duration.ofMinutes(5);
        private Duration maxExpiry = Duration.ofDays(1);
        private boolean ownerBinding;
        private CommitDurability durability = CommitDurability.RELAXED;
        private SecureRandom random = new SecureRandom();
        private final List<UnaryOperator<LockManager>> decorators = new ArrayList<>();

        private Builder(DataSource dataSource) {
            this.dataSource = Arguments.notNull(dataSource, "dataSource");
        }

        /**
         * Sets the dialect; detected from the data source (one borrowed connection) if not set.
         *
         * @param dialect the dialect of the data source's database; not null
         * @return this builder
         * @throws IllegalArgumentException if {@code dialect} is null
         */
        public Builder dialect(Dialect dialect) {
            this.dialect = Arguments.notNull(dialect, "dialect");
            return this;
        }

        /**
         * Sets the locks table; default {@code holdfast_locks}.
         *
         * @param table the table's name, a plain identifier, optionally schema-qualified
         * @return this builder
         * @throws IllegalArgumentException if {@code table} is null or not a plain identifier
         */
        public Builder table(String table) {
            this.table = SqlIdentifier.of(table).value();
            return this;
        }

        /**
         * Sets the expiry of {@code tryLock} and {@code reacquire} without an explicit one; default
         * 5 minutes.
         *
         * @param expiry at least 1 ms and at most the maximum expiry (checked by {@link #build()}); not null
         * @return this builder
         * @throws IllegalArgumentException if {@code expiry} is null
         */
        public Builder defaultExpiry(Duration expiry) {
            this.defaultExpiry = Arguments.notNull(expiry, "expiry");
            return this;
        }

        /**
         * Sets the longest expiry and increment accepted, and the cap on any extended expiry from now;
         * default 1 day.
         *
         * @param max 1 ms to 365 days (checked by {@link #build()}); not null
         * @return this builder
         * @throws IllegalArgumentException if {@code max} is null
         */
        public Builder maxExpiry(Duration max) {
            this.maxExpiry = Arguments.notNull(max, "max");
            return this;
        }

        /**
         * Sets owner binding; default off.
         *
         * @param on true to require the owner: the owner-less forms of {@code tryLock}, check, release
         *           and extension then raise {@link IllegalStateException}
         * @return this builder
         */
        public Builder ownerBinding(boolean on) {
            this.ownerBinding = on;
            return this;
        }

        /**
         * Sets whether {@code tryLock}, {@code reacquire} and releases wait for a durable commit;
         * default {@link CommitDurability#RELAXED}. Extensions and {@code forceRelease} are always durable.
         *
         * @param durability the commit durability; not null
         * @return this builder
         * @throws IllegalArgumentException if {@code durability} is null
         */
        public Builder durability(CommitDurability durability) {
            this.durability = Arguments.notNull(durability, "durability");
            return this;
        }

        /**
         * Sets the source of lock ids; default a new {@link SecureRandom}.
         *
         * @param random the generator each lock id's 128 bits come from; not null
         * @return this builder
         * @throws IllegalArgumentException if {@code random} is null
         */
        public Builder random(SecureRandom random) {
            this.random = Arguments.notNull(random, "random");
            return this;
        }

        /**
         * Sends the {@link LockManager} calls through {@code decorator.apply(locks)}, for what must hold whichever
         * way the lock manager is reached: meters, observations, exceptions translated for a framework. The
         * decorator gets the lock manager's own calls (or the previous decorator's result: the last one given is
         * the outermost) and must not call the lock manager itself. The operator calls ({@code heldLocks},
         * {@code forceRelease}, {@code purgeExpired}, …) are not decorated.
         *
         * @param decorator wraps the lock manager's calls; not null, and must not return null
         * @return this builder
         * @throws IllegalArgumentException if {@code decorator} is null
         */
        public Builder decoratedBy(UnaryOperator<LockManager> decorator) {
            decorators.add(Arguments.notNull(decorator, "decorator"));
            return this;
        }

        /**
         * Builds the lock manager, detecting the dialect if none was set.
         *
         * @return a lock manager with these settings
         * @throws IllegalArgumentException if the expiries are not 1 ms ≤ default ≤ max ≤ 365 days, or
         *                                  the detected database is not supported
         * @throws dev.holdfast.DatabaseException if the dialect had to be detected and no connection
         *                                        could be borrowed or its metadata read
         */
        public JdbcLockManager build() {
            if (maxExpiry.compareTo(Duration.ofMillis(1)) < 0 || maxExpiry.compareTo(Duration.ofDays(365)) > 0) {
                throw new IllegalArgumentException("maxExpiry must be 1 ms to 365 days, not " + maxExpiry);
            }
            Durations.positive("defaultExpiry", defaultExpiry, maxExpiry);
            return new JdbcLockManager(this, dialect != null ? dialect : Dialect.detect(dataSource));
        }
    }
}
