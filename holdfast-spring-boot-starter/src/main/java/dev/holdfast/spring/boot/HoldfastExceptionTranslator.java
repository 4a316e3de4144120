package dev.holdfast.spring.boot;

import dev.holdfast.DatabaseException;
import dev.holdfast.lease.LeaseLostException;
import dev.holdfast.lease.LeaseNotHeldException;
import dev.holdfast.lease.LeaseTimeoutException;
import dev.holdfast.optimistic.VersionConflictException;
import dev.holdfast.pessimistic.DeadlockException;
import dev.holdfast.pessimistic.LockTimeoutException;
import dev.holdfast.pessimistic.offline.AlreadyLockedException;
import dev.holdfast.pessimistic.offline.LockNotHeldException;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.PessimisticLockingFailureException;
import org.springframework.dao.support.PersistenceExceptionTranslator;
import org.springframework.jdbc.UncategorizedSQLException;
import org.springframework.jdbc.support.SQLExceptionSubclassTranslator;
import org.springframework.jdbc.support.SQLExceptionTranslator;

import java.sql.SQLException;
import java.util.function.Supplier;

/**
 * Translates Holdfast's outcomes into Spring's {@link DataAccessException} tree, so code written against
 * Spring keeps working, and the original Holdfast exception stays available as the cause:
 *
 * <table>
 *   <caption>Translations</caption>
 *   <tr><th>Holdfast</th><th>Spring</th></tr>
 *   <tr><td>{@link LockTimeoutException} (a lock wait bound ran out, or no-wait found the row held)</td>
 *       <td>{@link RowLockTimeoutException}, a {@link CannotAcquireLockException} that tells the
 *       {@linkplain RowLockTimeoutException#blockers() blockers}</td></tr>
 *   <tr><td>{@link DeadlockException}</td><td>{@link PessimisticLockingFailureException}, as Spring's own
 *       SQL translators do since 6.0.3 (its {@code DeadlockLoserDataAccessException} is deprecated)</td></tr>
 *   <tr><td>{@link AlreadyLockedException} (an offline lock is held by someone else)</td>
 *       <td>{@link OfflineLockHeldException}, a {@link CannotAcquireLockException}</td></tr>
 *   <tr><td>{@link LockNotHeldException} and its subtypes (expired, foreign)</td>
 *       <td>{@link OfflineLockLostException}, a {@link PessimisticLockingFailureException}</td></tr>
 *   <tr><td>{@link VersionConflictException} (a stale version: the row changed or was deleted)</td>
 *       <td>{@link StaleVersionException}, an {@link org.springframework.dao.OptimisticLockingFailureException}</td></tr>
 *   <tr><td>{@link LeaseTimeoutException} (a blocking lease acquire's bound ran out)</td>
 *       <td>{@link CannotAcquireLockException}</td></tr>
 *   <tr><td>{@link LeaseNotHeldException} (and {@link dev.holdfast.lease.LeaseExpiredException}),
 *       {@link LeaseLostException}: the caller no longer holds its lease</td>
 *       <td>{@link PessimisticLockingFailureException}</td></tr>
 *   <tr><td>{@link DatabaseException} wrapping an {@link SQLException}</td><td>what Spring's
 *       {@link SQLExceptionSubclassTranslator} makes of that SQLException (remade with the Holdfast exception as
 *       its cause where its type takes a message and a cause); if nothing, a
 *       {@link DataAccessResourceFailureException} when the SQLException has no SQLState (the pool is closed or the
 *       driver failed: Holdfast's own statements are not the cause), else an {@link UncategorizedSQLException}</td></tr>
 *   <tr><td>anything else</td><td>{@code null}: not translated</td></tr>
 * </table>
 *
 * The starter's {@code LeaseService}, {@code JdbcLockManager} and {@code PessimisticLocks} throw its translations
 * wherever they are called from ({@link TranslatingLeases}, {@link TranslatingLockManager},
 * {@code PessimisticLocks.failuresAs}); as a {@link PersistenceExceptionTranslator} bean it is also picked up by
 * Spring's {@code @Repository} exception translation; {@link #translate(RuntimeException)} serves direct use.
 */
public class HoldfastExceptionTranslator implements PersistenceExceptionTranslator {

    private final SQLExceptionTranslator sqlTranslator = new SQLExceptionSubclassTranslator();

    @Override
    public @Nullable DataAccessException translateExceptionIfPossible(RuntimeException ex) {
        if (ex instanceof LockTimeoutException e) {
            return new RowLockTimeoutException(e);
        }
        if (ex instanceof DeadlockException e) {
            return new PessimisticLockingFailureException(e.getMessage(), e);
        }
        if (ex instanceof AlreadyLockedException e) {
            return new OfflineLockHeldException(e);
        }
        if (ex instanceof LockNotHeldException e) {
            return new OfflineLockLostException(e);
        }
        if (ex instanceof VersionConflictException e) {
            return new StaleVersionException(e);
        }
        if (ex instanceof LeaseTimeoutException e) {
            return new CannotAcquireLockException(e.getMessage(), e);
        }
        if (ex instanceof LeaseNotHeldException || ex instanceof LeaseLostException) {
            return new PessimisticLockingFailureException(ex.getMessage(), ex);
        }
        if (ex instanceof DatabaseException e && e.getCause() instanceof SQLException sql) {
            DataAccessException translated = sqlTranslator.translate("Holdfast: " + e.getMessage(), null, sql);
            if (translated != null) {
                return withCause(translated, e);
            }
            // Holdfast's statements are its own, tested SQL: a failure without an SQLState comes from the
            // driver or the pool (closed, out of reach), not from the statement
            return sql.getSQLState() == null
                    ? new DataAccessResourceFailureException(e.getMessage(), e)
                    : new UncategorizedSQLException("Holdfast: " + e.getMessage(), null, sql);
        }
        return null;
    }

    /**
     * {@code translated} again, with the Holdfast exception as its cause where its type takes a message and a
     * cause (Spring's SQL translators make it with the driver's exception as the cause); else as it is.
     */
    private static DataAccessException withCause(DataAccessException translated, DatabaseException holdfast) {
        try {
            return translated
                    .getClass()
                    .getConstructor(String.class, Throwable.class)
                    .newInstance(translated.getMessage(), holdfast);
        } catch (ReflectiveOperationException | RuntimeException noSuchConstructor) {
            return translated;
        }
    }

    /**
     * The translation of {@code ex}, or {@code ex} itself if there is none: for callers that throw what they
     * caught.
     *
     * @param ex the exception a Holdfast call threw
     * @return the {@link DataAccessException} the table in the class description names for {@code ex}; or
     *         {@code ex} itself if it is not translated
     */
    public RuntimeException translate(RuntimeException ex) {
        DataAccessException translated = translateExceptionIfPossible(ex);
        return translated != null ? translated : ex;
    }

    /** Runs {@code call}, throwing the translation of what it throws: the translating decorators' every call. */
    <T> T translating(Supplier<T> call) {
        try {
            return call.get();
        } catch (RuntimeException e) {
            throw translate(e);
        }
    }

    /** As {@link #translating(Supplier)}, for a call without a result. */
    void translating(Runnable call) {
        translating(() -> {
            call.run();
            return null;
        });
    }
}
