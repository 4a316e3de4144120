package dev.holdfast.hibernate;

import dev.holdfast.internal.Arguments;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.pessimistic.LockTimeoutException;
import dev.holdfast.pessimistic.LockWait;
import dev.holdfast.pessimistic.PessimisticLocks;
import dev.holdfast.pessimistic.RowLockException;
import dev.holdfast.pessimistic.RowRef;
import jakarta.persistence.EntityManager;
import jakarta.persistence.LockModeType;
import org.hibernate.Session;
import org.hibernate.engine.jdbc.connections.spi.ConnectionProvider;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.persister.entity.AbstractEntityPersister;
import org.hibernate.persister.entity.EntityPersister;
import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * JPA pessimistic locks whose wait bound holds on H2, PostgreSQL and MariaDB. Hibernate's own
 * {@code jakarta.persistence.lock.timeout} hint is not applied on every database (see the README
 * and {@code JpaLocksTest}); this applies the bound with {@link PessimisticLocks} on the session's
 * own connection <em>before</em> the entity is read with {@code PESSIMISTIC_WRITE}, which then
 * finds the row already locked by its own transaction and does not wait.
 *
 * <pre>{@code
 * PurchaseOrder order = JpaLocks.findForUpdate(em, PurchaseOrder.class, orderNo, Duration.ofSeconds(3));
 * }</pre>
 */
public final class JpaLocks {

    private JpaLocks() {}

    /**
     * Finds an entity and locks its row for the rest of the current transaction, waiting at most
     * {@code maxWait} for another transaction's lock. Two statements: the bounded lock of the row
     * (by its table and id column) and the {@code find} with {@link LockModeType#PESSIMISTIC_WRITE}.
     *
     * @param <T>     the entity's class
     * @param em      the entity manager, in an active transaction
     * @param type    the entity's class, a mapped entity with a single id attribute
     * @param id      the entity's id
     * @param maxWait how long to wait at most for another transaction's lock on the row; zero does not wait
     * @return the locked entity, or {@code null} if there is no such row
     * @throws LockTimeoutException     if the bound ran out (or, for zero, the row was locked): the
     *                                  database transaction has been rolled back and the JPA
     *                                  transaction is marked rollback-only. Its
     *                                  {@link LockTimeoutException#blockers() blockers} are observed
     *                                  through the {@link DataSource} behind Hibernate's
     *                                  {@link ConnectionProvider} (as {@link PessimisticLocks} explains);
     *                                  with a provider that has none, they are unknown
     * @throws dev.holdfast.pessimistic.DeadlockException if chosen as a deadlock victim; likewise rolled back
     * @throws IllegalArgumentException for a null or negative argument, an unknown entity, a
     *                                  composite id, or an id type {@link RowRef} does not support
     * @throws IllegalStateException    if no transaction is active
     */
    public static <T> @Nullable T findForUpdate(EntityManager em, Class<T> type, Object id, Duration maxWait) {
        return find(em, type, id, maxWait, null);
    }

    /**
     * As {@link #findForUpdate(EntityManager, Class, Object, Duration)}, locking the row with {@code locks}: their
     * {@link PessimisticLocks.Observer observer} is told of the lock (the Spring Boot starter's {@code PessimisticLocks}
     * bean carries its metrics and observations), and its timeout names the blockers as {@code locks} do (the
     * starter's observe them through the application's pool).
     *
     * @param <T>     the entity's class
     * @param em      the entity manager, in an active transaction
     * @param type    the entity's class, a mapped entity with a single id attribute
     * @param id      the entity's id
     * @param maxWait how long to wait at most for another transaction's lock on the row; zero does not wait
     * @param locks   the locks to lock the row with, for the session's database
     * @return the locked entity, or {@code null} if there is no such row
     * @throws IllegalArgumentException also if {@code locks} are for another database than the session's; nothing
     *                                  is locked then
     */
    public static <T> @Nullable T findForUpdate(
            EntityManager em, Class<T> type, Object id, Duration maxWait, PessimisticLocks locks) {
        return find(em, type, id, maxWait, Arguments.notNull(locks, "locks"));
    }

    private static <T> @Nullable T find(
            EntityManager em, Class<T> type, Object id, Duration maxWait, @Nullable PessimisticLocks given) {
        Arguments.notNull(em, "em");
        Arguments.notNull(type, "type");
        LockWait wait = LockWait.atMost(maxWait);
        Session session = em.unwrap(Session.class);
        RowRef row = rowOf(session, type, id);
        try {
            boolean found = session.doReturningWork(
                    connection -> (given == null ? locks(session, connection) : sameDatabase(given, connection))
                            .forUpdate(connection, row, wait));
            if (!found) {
                return null;
            }
        } catch (RuntimeException e) {
            // given the Spring starter's locks, the RowLockException is the cause of Spring's exception
            if (e instanceof RowLockException || e.getCause() instanceof RowLockException) {
                markRollbackOnly(session, e);
            }
            throw e;
        }
        return em.find(type, id, LockModeType.PESSIMISTIC_WRITE);
    }

    private static PessimisticLocks sameDatabase(PessimisticLocks locks, Connection connection) {
        Dialect session = Dialect.detect(connection);
        if (locks.dialect() != session) {
            throw new IllegalArgumentException(
                    "the locks are for " + locks.dialect() + ", the session's database is " + session);
        }
        return locks;
    }

    /** Locks for the session's database, observing waits through its connection provider's DataSource if it has one. */
    static PessimisticLocks locks(Session session, Connection connection) {
        PessimisticLocks locks = PessimisticLocks.of(Dialect.detect(connection));
        DataSource source = dataSourceOf(session);
        return source == null ? locks : locks.blockersFrom(source);
    }

    private static @Nullable DataSource dataSourceOf(Session session) {
        try {
            ConnectionProvider provider = session.getFactory()
                    .unwrap(SessionFactoryImplementor.class)
                    .getServiceRegistry()
                    .getService(ConnectionProvider.class);
            return provider != null && provider.isUnwrappableAs(DataSource.class)
                    ? provider.unwrap(DataSource.class)
                    : null;
        } catch (RuntimeException e) {
            return null; // e.g. a multi-tenant setup: blockers unknown, the lock works as before
        }
    }

    static RowRef rowOf(Session session, Class<?> type, Object id) {
        EntityPersister persister;
        try {
            persister = session.getFactory()
                    .unwrap(SessionFactoryImplementor.class)
                    .getMappingMetamodel()
                    .getEntityDescriptor(type);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(type.getName() + " is not an entity of this persistence unit", e);
        }
        if (!(persister instanceof AbstractEntityPersister p) || p.getIdentifierColumnNames().length != 1) {
            throw new IllegalArgumentException(
                    type.getName() + " must have a single-column id to be locked by JpaLocks");
        }
        return RowRef.of(p.getTableName(), p.getIdentifierColumnNames()[0], id);
    }

    private static void markRollbackOnly(Session session, RuntimeException failure) {
        try {
            if (session.getTransaction().isActive()) {
                session.getTransaction().setRollbackOnly();
            }
        } catch (RuntimeException e) {
            failure.addSuppressed(e); // e.g. a JTA transaction this session does not control
        }
    }
}
