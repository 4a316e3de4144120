package dev.holdfast.spring.boot;

import dev.holdfast.internal.Arguments;
import dev.holdfast.pessimistic.LockWait;
import dev.holdfast.pessimistic.PessimisticLocks;
import dev.holdfast.pessimistic.RowRef;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.IllegalTransactionStateException;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import java.sql.Connection;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.function.Function;
import javax.sql.DataSource;

/**
 * Row locks ({@link PessimisticLocks}) on the connection of the current Spring-managed transaction, so
 * that a lock lasts until that transaction commits or rolls back. Call it inside a {@code @Transactional}
 * method or a {@code TransactionTemplate} block whose transaction manager manages the application's
 * {@link DataSource} ({@code DataSourceTransactionManager}, {@code JdbcTransactionManager} or
 * {@code JpaTransactionManager}); it takes the transaction's connection from Spring and hands it back,
 * so the caller never touches a {@link Connection}.
 *
 * <p>Every lock goes through the {@link PessimisticLocks} it was built with (the auto-configured bean:
 * its observers, meters and observations apply, and its failures are Spring's exceptions, see
 * {@link HoldfastExceptionTranslator}). A lock that fails has already rolled the transaction's connection
 * back; the Spring exception that leaves the transactional method then rolls the transaction back too.
 *
 * <p>Without an active transaction every call throws {@link IllegalTransactionStateException} before it
 * borrows a connection or locks anything: a row lock taken outside a transaction would end at once.
 *
 * <p>Thread-safe; auto-configured as a bean when the application has none.
 */
public final class TransactionalRowLocks {

    private final PessimisticLocks locks;
    private final DataSource dataSource;

    /**
     * Locks through {@code locks} on the transaction's connection of {@code dataSource}.
     *
     * @param locks      the row locks to go through (the auto-configured bean, for its instrumentation and translation)
     * @param dataSource the DataSource the application's transaction manager manages (the pool itself, not a
     *                   {@code TransactionAwareDataSourceProxy})
     * @throws IllegalArgumentException if an argument is null
     */
    public TransactionalRowLocks(PessimisticLocks locks, DataSource dataSource) {
        this.locks = Arguments.notNull(locks, "locks");
        this.dataSource = Arguments.notNull(dataSource, "dataSource");
    }

    /**
     * Locks one row until the current transaction ends: {@link PessimisticLocks#forUpdate(Connection, RowRef, LockWait)}
     * on the transaction's connection.
     *
     * @param row  the row to lock
     * @param wait how long to wait for the row if another transaction holds it: {@link LockWait#atMost(Duration)},
     *             {@link LockWait#noWait()} or {@link LockWait#skipLocked()}
     * @return true if the row exists and is now locked; false if there is no such row, or it was held by another
     *         transaction and {@code wait} is {@link LockWait#skipLocked()}
     * @throws RowLockTimeoutException            if the wait bound ran out, or a no-wait lock found the row held
     *                                            (a {@code CannotAcquireLockException}); the transaction's connection
     *                                            was rolled back
     * @throws org.springframework.dao.PessimisticLockingFailureException if the transaction was chosen as a deadlock
     *                                            victim; the transaction's connection was rolled back
     * @throws org.springframework.dao.DataAccessException for any other database failure
     * @throws IllegalTransactionStateException   if no transaction is active; nothing was locked
     * @throws IllegalArgumentException           for a null argument
     */
    public boolean forUpdate(RowRef row, LockWait wait) {
        return onTransactionConnection(connection -> locks.forUpdate(connection, row, wait));
    }

    /**
     * Locks the row of {@code table} whose {@code keyColumn} is {@code key} until the current transaction
     * ends, waiting at most {@code maxWait}. Shorthand for {@link #forUpdate(RowRef, LockWait)}.
     *
     * @param table     the table, a plain SQL identifier, optionally schema-qualified
     * @param keyColumn the table's unique key column, a plain SQL identifier
     * @param key       the key value: a {@link String} (1 to {@value RowRef#MAX_STRING_KEY} characters, not blank),
     *                  an integral number, a {@link java.math.BigDecimal} or a {@link java.util.UUID}
     * @param maxWait   the longest wait for the row if another transaction holds it, from zero (fail at once) to
     *                  {@link LockWait#MAX}
     * @return true if the row exists and is now locked; false if there is no such row
     * @throws RowLockTimeoutException          if {@code maxWait} ran out, or with a zero {@code maxWait} the row was
     *                                          held; the transaction's connection was rolled back
     * @throws IllegalTransactionStateException if no transaction is active; nothing was locked
     * @throws IllegalArgumentException         if an argument is null or invalid
     * @see #forUpdate(RowRef, LockWait)
     */
    public boolean forUpdate(String table, String keyColumn, Object key, Duration maxWait) {
        return onTransactionConnection(connection -> locks.forUpdate(connection, table, keyColumn, key, maxWait));
    }

    /**
     * Locks several rows until the current transaction ends, in one global order, so that two callers locking
     * overlapping sets never deadlock with each other: {@link PessimisticLocks#forUpdateAll(Connection, Collection,
     * LockWait)} on the transaction's connection. A bounded {@code wait} bounds the whole call.
     *
     * @param rows the rows to lock, of one or more tables (duplicates are locked once)
     * @param wait how long the whole call may wait for rows other transactions hold: {@link LockWait#atMost(Duration)},
     *             {@link LockWait#noWait()} or {@link LockWait#skipLocked()}
     * @return the rows now locked, in locking order (missing rows, and with skip-locked held rows, left out)
     * @throws RowLockTimeoutException          if the bound ran out before every row was locked; the transaction's
     *                                          connection was rolled back, so nothing stays locked
     * @throws IllegalTransactionStateException if no transaction is active; nothing was locked
     * @throws IllegalArgumentException         if {@code rows} or {@code wait} is null, or {@code rows} contains null
     * @see #forUpdate(RowRef, LockWait)
     */
    public List<RowRef> forUpdateAll(Collection<RowRef> rows, LockWait wait) {
        return onTransactionConnection(connection -> locks.forUpdateAll(connection, rows, wait));
    }

    /**
     * Runs {@code work} on the current transaction's connection and returns its result, for another Holdfast
     * call that takes a {@link Connection} and must be part of the transaction (a
     * {@code VersionedTable.verifyUnchanged}, say). The connection is handed back to Spring afterwards, not
     * closed; {@code work} must not close it or change its auto-commit mode. Exceptions of {@code work} pass
     * through unchanged.
     *
     * @param <T>  the type of the result
     * @param work what to do on the transaction's connection
     * @return what {@code work} returned
     * @throws IllegalTransactionStateException if no transaction is active; {@code work} was not run
     * @throws IllegalArgumentException         if {@code work} is null
     */
    public <T> T onTransactionConnection(Function<Connection, T> work) {
        Arguments.notNull(work, "work");
        if (!TransactionSynchronizationManager.isActualTransactionActive()) {
            throw new IllegalTransactionStateException("No active Spring transaction: a row lock taken outside a"
                    + " transaction would end at once. Call it from a @Transactional method or a TransactionTemplate.");
        }
        Connection connection = DataSourceUtils.getConnection(dataSource);
        try {
            return work.apply(connection);
        } finally {
            DataSourceUtils.releaseConnection(connection, dataSource);
        }
    }
}
