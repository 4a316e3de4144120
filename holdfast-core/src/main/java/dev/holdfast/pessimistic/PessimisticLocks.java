package dev.holdfast.pessimistic;

import dev.holdfast.DatabaseException;
import dev.holdfast.internal.Arguments;
import dev.holdfast.internal.Failures;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.jdbc.dialect.SqlErrorKind;
import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.function.UnaryOperator;
import javax.sql.DataSource;

/**
 * Pessimistic row locks ({@code SELECT … FOR UPDATE}) inside the caller's transaction, with a wait
 * bound that holds on every supported database.
 *
 * <pre>{@code
 * PessimisticLocks locks = PessimisticLocks.of(dataSource);
 * connection.setAutoCommit(false);
 * locks.forUpdate(connection, RowRef.of("purchase_order", "order_no", orderNo), LockWait.atMost(Duration.ofSeconds(3)));
 * // ... read and change the aggregate, then commit
 * }</pre>
 *
 * <p>Failures: a bound that runs out raises {@link LockTimeoutException}; a deadlock victim gets
 * {@link DeadlockException}; anything else {@link DatabaseException}. In each case the transaction
 * has already been rolled back. The connection leaves with the settings it came with, on every path.
 *
 * <p><b>Who blocked a timeout.</b> A {@link LockTimeoutException} names the sessions that blocked
 * the wait ({@link LockTimeoutException#blockers()}). A database names the holders of a lock only to
 * a session that waits for it, and the waiting connection can run nothing else; so locks that have a
 * {@link DataSource} to observe through ({@link #of(DataSource)}, {@link #blockersFrom(DataSource)})
 * read them from a connection of their own while the lock still waits: 500 ms before a bounded wait
 * runs out (half way, for a bound under 1 s), on a shared daemon thread, at most
 * four at once. A lock that ends in time costs no statement and
 * no connection, only a timer entry in memory; the caller's connection never runs an extra
 * statement. A lock whose bound ran out waits at most 100 ms more for an observation still running.
 * When the observation could not be made (no data source, a role that may not see other sessions,
 * a failed query, a no-wait lock) the timeout is thrown all the same and its blockers say why they
 * are unknown.
 *
 * <p>Thread-safe and stateless apart from its settings; keep one per database.
 */
public final class PessimisticLocks {

    /**
     * Told the outcome of every row lock attempt, for metrics, logs or tracing. Called on the locking
     * thread after the attempt (and after the rollback of a failed one); an exception it throws is ignored.
     */
    @FunctionalInterface
    public interface Observer {
        /**
         * Told how one lock attempt ended.
         *
         * @param row     the row the lock was taken on
         * @param wait    the wait the caller gave (for {@link #forUpdateAll}, the whole call's, not the
         *                part left for this row)
         * @param waited  how long the lock statement took; zero when {@link #forUpdateAll}'s bound ran
         *                out before this row's statement began
         * @param locked  whether the row is now locked (false: no such row, or skipped)
         * @param failure null on success, else the {@link LockTimeoutException},
         *                {@link DeadlockException} or {@link DatabaseException} about to be thrown (or,
         *                for a failure that is not a database answer, the driver's runtime exception),
         *                before any {@link #failuresAs translation}
         */
        void lockEnded(RowRef row, LockWait wait, Duration waited, boolean locked, @Nullable RuntimeException failure);

        /**
         * Called on the locking thread just before a row is locked; the returned attempt is told how it
         * ended, in place of {@link #lockEnded}, on the same thread. An observer that times the wait
         * itself or opens a span around it overrides this. The default tells {@link #lockEnded}. An
         * exception it throws is ignored (the lock then goes unobserved).
         *
         * @param row  the row about to be locked
         * @param wait the wait the caller gave (for {@link #forUpdateAll}, the whole call's)
         * @return the attempt to tell how the lock ended
         */
        default Attempt lockStarting(RowRef row, LockWait wait) {
            return (waited, locked, failure) -> lockEnded(row, wait, waited, locked, failure);
        }

        /** One lock attempt under way, as {@link #lockStarting} began it. */
        @FunctionalInterface
        interface Attempt {
            /**
             * As {@link Observer#lockEnded}, for the row and wait the attempt began with.
             *
             * @param waited  how long the lock statement took
             * @param locked  whether the row is now locked (false: no such row, or skipped)
             * @param failure null on success, else the exception about to be thrown
             */
            void ended(Duration waited, boolean locked, @Nullable RuntimeException failure);
        }
    }

    private static final Observer.Attempt NO_ATTEMPT = (waited, locked, failure) -> {};

    private static final Observer NO_OBSERVER = new Observer() {
        @Override
        public void lockEnded(
                RowRef row, LockWait wait, Duration waited, boolean locked, @Nullable RuntimeException failure) {}

        @Override
        public Attempt lockStarting(RowRef row, LockWait wait) {
            return NO_ATTEMPT; // no allocation on the unobserved path
        }
    };

    private static final String NO_SOURCE = "no DataSource to observe the wait through: build the locks with"
            + " PessimisticLocks.of(DataSource) or call blockersFrom(dataSource)";

    private final Dialect dialect;
    private final RowLockSql sql;
    private final Observer observer;
    private final BlockerWatcher watcher;
    private final UnaryOperator<RuntimeException> failures;

    private PessimisticLocks(
            Dialect dialect, Observer observer, BlockerWatcher watcher, UnaryOperator<RuntimeException> failures) {
        this.dialect = Arguments.notNull(dialect, "dialect");
        this.sql = RowLockSql.forDialect(dialect);
        this.observer = Arguments.notNull(observer, "observer");
        this.watcher = watcher;
        this.failures = failures;
    }

    /**
     * Locks for a database of the given dialect. Their timeouts name no blockers until given a
     * {@link DataSource} with {@link #blockersFrom(DataSource)}.
     *
     * @param dialect the database's dialect; not null
     * @return locks without an observer, whose timeouts name no blockers
     * @throws IllegalArgumentException if {@code dialect} is null
     */
    public static PessimisticLocks of(Dialect dialect) {
        return new PessimisticLocks(
                dialect, NO_OBSERVER, BlockerWatcher.none(dialect, NO_SOURCE), UnaryOperator.identity());
    }

    /**
     * Locks for the database behind {@code dataSource}; borrows one connection to detect it. Their
     * timeouts name their blockers, observed through {@code dataSource} (see the class description).
     *
     * @param dataSource the database's pool itself, not a proxy bound to the caller's transaction;
     *                   not null
     * @return locks without an observer, whose timeouts name their blockers
     * @throws IllegalArgumentException if {@code dataSource} is null or its database is not supported
     * @throws DatabaseException        if no connection could be borrowed or its metadata read
     */
    public static PessimisticLocks of(DataSource dataSource) {
        Dialect dialect = Dialect.detect(dataSource);
        return new PessimisticLocks(
                dialect, NO_OBSERVER, BlockerWatcher.through(dialect, dataSource), UnaryOperator.identity());
    }

    /**
     * {@return the same locks, reporting every attempt to {@code observer} (replacing any earlier one)}
     *
     * @param observer told the outcome of every lock attempt; not null
     * @throws IllegalArgumentException if {@code observer} is null
     */
    public PessimisticLocks observedBy(Observer observer) {
        return new PessimisticLocks(dialect, observer, watcher, failures);
    }

    /**
     * The same locks, throwing {@code translate.apply(e)} in place of each exception {@code e} of a lock call (for
     * a framework's exceptions, with {@code e} as their cause; returning {@code e} keeps it), replacing any earlier
     * translation. Observers still see Holdfast's exception.
     *
     * @param translate maps each exception of a lock call to the one to throw; not null (a null
     *                  result keeps the original exception)
     * @return the same locks, with their exceptions translated
     * @throws IllegalArgumentException if {@code translate} is null
     */
    public PessimisticLocks failuresAs(UnaryOperator<RuntimeException> translate) {
        return new PessimisticLocks(dialect, observer, watcher, Arguments.notNull(translate, "translate"));
    }

    /**
     * The same locks, observing a bounded wait that may run out through a connection borrowed from
     * {@code dataSource} (see the class description), so that its {@link LockTimeoutException}
     * names the blockers. Give it the pool itself, not a proxy bound to the caller's transaction.
     * The observing connection is borrowed only while a wait is near its bound and returned as it
     * came; if the pool is exhausted, the observation waits for a connection on its own thread
     * while the lock call ends on time with its blockers unknown.
     *
     * @param dataSource the pool to borrow observing connections from; not null
     * @return the same locks, whose timeouts name their blockers
     * @throws IllegalArgumentException if {@code dataSource} is null
     */
    public PessimisticLocks blockersFrom(DataSource dataSource) {
        Arguments.notNull(dataSource, "dataSource");
        return new PessimisticLocks(dialect, observer, BlockerWatcher.through(dialect, dataSource), failures);
    }

    /** {@return the same locks, never observing a wait: every timeout's blockers are unknown} */
    public PessimisticLocks withoutBlockers() {
        return new PessimisticLocks(
                dialect,
                observer,
                BlockerWatcher.none(dialect, "observing waits is turned off (PessimisticLocks.withoutBlockers())"),
                failures);
    }

    /** {@return whether timeouts name their blockers: a {@link DataSource} to observe waits through was given} */
    public boolean namesBlockers() {
        return watcher.observes();
    }

    /** {@return the dialect in use} */
    public Dialect dialect() {
        return dialect;
    }

    /**
     * Locks the row of {@code table} whose {@code keyColumn} is {@code key}, waiting at most
     * {@code maxWait}. Shorthand for {@link #forUpdate(Connection, RowRef, LockWait)} with
     * {@link RowRef#of(String, String, Object)} and {@link LockWait#atMost(Duration)}.
     *
     * @param connection a connection inside a transaction (auto-commit off)
     * @param table      the table, a plain identifier, optionally schema-qualified
     * @param keyColumn  the unique key column, a plain identifier
     * @param key        the key value, of a type {@link RowRef#of(String, String, Object)} accepts
     * @param maxWait    the longest wait, zero (no wait) to {@link LockWait#MAX}; rounded up to
     *                   whole milliseconds
     * @return true if the row exists and is now locked; false if there is no such row
     * @throws LockTimeoutException     if the wait bound ran out, or a zero bound found the row held
     * @throws DeadlockException        if this transaction was chosen as a deadlock victim
     * @throws DatabaseException        for any other database failure
     * @throws IllegalArgumentException for a null argument, an invalid name or key, or a negative or
     *                                  too long {@code maxWait}
     * @throws IllegalStateException    if the connection is in auto-commit mode (a lock would end at once)
     */
    public boolean forUpdate(Connection connection, String table, String keyColumn, Object key, Duration maxWait) {
        return forUpdate(connection, RowRef.of(table, keyColumn, key), LockWait.atMost(maxWait));
    }

    /**
     * Locks one row for the rest of the caller's transaction.
     *
     * @param connection a connection inside a transaction (auto-commit off)
     * @param row        the row to lock
     * @param wait       how long to wait if another transaction holds the row
     * @return true if the row exists and is now locked; false if there is no such row, or it was
     *         held by another transaction and {@code wait} is {@link LockWait#skipLocked()}
     * @throws LockTimeoutException     if the wait bound ran out, or a no-wait lock found the row held
     * @throws DeadlockException        if this transaction was chosen as a deadlock victim
     * @throws DatabaseException        for any other database failure
     * @throws IllegalArgumentException for a null argument
     * @throws IllegalStateException    if the connection is in auto-commit mode (a lock would end at once)
     */
    public boolean forUpdate(Connection connection, RowRef row, LockWait wait) {
        try {
            return lockOne(connection, row, wait);
        } catch (RuntimeException e) {
            throw translated(e);
        }
    }

    private boolean lockOne(Connection connection, RowRef row, LockWait wait) {
        requireArguments(connection, wait);
        if (row == null) {
            throw new IllegalArgumentException("row must not be null");
        }
        requireTransaction(connection);
        return lock(connection, row, wait, wait);
    }

    /**
     * Locks several rows, of one or more tables, in one global order (table, key column, key,
     * schema), so that two callers locking overlapping sets can never deadlock with each other. The
     * order is that of the rows the database resolves the names to, however a caller spells them:
     * {@code Orders} and {@code orders}, or {@code public.orders} and {@code orders} (an
     * unqualified name means the current schema, or database on MariaDB), take the same place. A
     * bounded {@code wait} bounds the whole call, not each row. Duplicates are locked once (on
     * MariaDB, where table names may be case-sensitive, two spellings that differ only in case are
     * both locked, which is harmless if they are one table). One extra query reads the current
     * schema, only when a call names the same table, column and key both with and without a schema.
     *
     * @param connection a connection inside a transaction (auto-commit off)
     * @param rows       the rows to lock, in any order; may be empty, must not contain null
     * @param wait       how long the whole call may wait for rows other transactions hold
     * @return the rows now locked, in locking order: missing rows (and, with skip-locked, held
     *         rows) are left out
     * @throws LockTimeoutException     if the bound ran out before every row was locked; nothing
     *                                  stays locked, as the transaction was rolled back
     * @throws DeadlockException        if this transaction was chosen as a deadlock victim
     * @throws DatabaseException        for any other database failure, reading the current schema
     *                                  included
     * @throws IllegalArgumentException for a null argument, or {@code rows} containing null
     * @throws IllegalStateException    if the connection is in auto-commit mode
     * @see #forUpdate(Connection, RowRef, LockWait)
     */
    public List<RowRef> forUpdateAll(Connection connection, Collection<RowRef> rows, LockWait wait) {
        try {
            return lockAll(connection, rows, wait);
        } catch (RuntimeException e) {
            throw translated(e);
        }
    }

    private RuntimeException translated(RuntimeException e) {
        RuntimeException t = failures.apply(e);
        return t != null ? t : e;
    }

    private List<RowRef> lockAll(Connection connection, Collection<RowRef> rows, LockWait wait) {
        requireArguments(connection, wait);
        if (rows == null || rows.stream().anyMatch(Objects::isNull)) {
            throw new IllegalArgumentException("rows must not be null or contain null");
        }
        requireTransaction(connection);
        long deadline = System.nanoTime() + wait.bound().toNanos();
        List<RowRef> ordered;
        try {
            ordered = LockOrder.sort(dialect, rows, LockOrder.resolver(dialect, connection));
        } catch (SQLException e) {
            rollback(connection, e);
            throw Failures.database("reading the current schema to order " + rows + " (transaction rolled back)", e);
        }
        List<RowRef> locked = new ArrayList<>(ordered.size());
        for (RowRef row : ordered) {
            LockWait remaining = wait;
            if (wait.mode() == LockWait.Mode.BOUNDED) {
                long leftMillis = Math.max(0, (deadline - System.nanoTime()) / 1_000_000);
                if (leftMillis == 0) {
                    rollback(connection, null);
                    LockTimeoutException timeout = new LockTimeoutException(
                            row,
                            wait,
                            wait.bound(),
                            null,
                            Blockers.unknown("the bound ran out before " + row + " was locked, without a wait"));
                    ended(starting(row, wait), Duration.ZERO, false, timeout);
                    throw timeout;
                }
                remaining = LockWait.atMost(Duration.ofMillis(leftMillis));
            }
            if (lock(connection, row, remaining, wait)) {
                locked.add(row);
            }
        }
        return locked;
    }

    private boolean lock(Connection connection, RowRef row, LockWait wait, LockWait reported) {
        Observer.Attempt attempt = starting(row, reported);
        long start = System.nanoTime();
        BlockerWatcher.Watch watch = watcher.watch(connection, wait, start);
        boolean locked;
        try {
            locked = RowLocking.lock(connection, sql, row, wait);
        } catch (SQLException e) {
            Duration waited = Duration.ofNanos(System.nanoTime() - start);
            // Blockers first: they were observed while the transaction still waited.
            RuntimeException failure = failure(e, row, wait, reported, waited, watch);
            rollback(connection, e);
            ended(attempt, waited, false, failure);
            throw failure;
        } catch (RuntimeException e) {
            // not a database answer (e.g. a driver bug): the attempt still ends, so a span or scope closes
            ended(attempt, Duration.ofNanos(System.nanoTime() - start), false, e);
            throw e;
        } finally {
            watch.end();
        }
        ended(attempt, Duration.ofNanos(System.nanoTime() - start), locked, null);
        return locked;
    }

    private RuntimeException failure(
            SQLException e, RowRef row, LockWait wait, LockWait reported, Duration waited, BlockerWatcher.Watch watch) {
        SqlErrorKind kind = dialect.classify(e);
        // A MariaDB max_statement_time interrupt is how a sub-second bound ends there.
        if (kind == SqlErrorKind.LOCK_TIMEOUT
                || (kind == SqlErrorKind.STATEMENT_CANCELLED && wait.mode() == LockWait.Mode.BOUNDED)) {
            return new LockTimeoutException(row, reported, waited, e, watch.blockers(waited));
        }
        if (kind == SqlErrorKind.DEADLOCK) {
            return new DeadlockException(row, waited, e);
        }
        return Failures.database("locking " + row + " (transaction rolled back)", e);
    }

    private Observer.Attempt starting(RowRef row, LockWait wait) {
        try {
            return observer.lockStarting(row, wait);
        } catch (RuntimeException ignored) {
            return NO_ATTEMPT; // an observer must never change the outcome of a lock
        }
    }

    private static void ended(
            Observer.Attempt attempt, Duration waited, boolean locked, @Nullable RuntimeException failure) {
        try {
            attempt.ended(waited, locked, failure);
        } catch (RuntimeException ignored) {
            // an observer must never change the outcome of a lock
        }
    }

    private static void rollback(Connection connection, @Nullable SQLException failure) {
        try {
            connection.rollback();
        } catch (SQLException e) {
            if (failure != null) {
                failure.addSuppressed(e);
            }
        }
    }

    private static void requireArguments(Connection connection, LockWait wait) {
        if (connection == null) {
            throw new IllegalArgumentException("connection must not be null");
        }
        if (wait == null) {
            throw new IllegalArgumentException("wait must not be null");
        }
    }

    private static void requireTransaction(Connection connection) {
        try {
            if (connection.getAutoCommit()) {
                throw new IllegalStateException(
                        "A row lock needs a transaction: the connection is in auto-commit mode");
            }
        } catch (SQLException e) {
            throw Failures.database("reading the auto-commit mode", e);
        }
    }
}
