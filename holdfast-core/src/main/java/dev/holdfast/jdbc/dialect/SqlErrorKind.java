package dev.holdfast.jdbc.dialect;

/**
 * What a {@link java.sql.SQLException} means for a concurrency-aware caller, independent of the
 * vendor. Produced by {@link Dialect#classify(Throwable)}.
 */
public enum SqlErrorKind {
    /** A lock wait ran out, or a no-wait lock found the row taken (PostgreSQL 55P03, MariaDB 1205, H2 50200). */
    LOCK_TIMEOUT,
    /** This transaction was chosen as a deadlock victim (PostgreSQL 40P01, MariaDB 1213, H2 40001). */
    DEADLOCK,
    /** A serializable transaction could not be serialized (40001 where it is not a deadlock). */
    SERIALIZATION_FAILURE,
    /** A unique or primary key constraint was violated (23505, MariaDB 1062). */
    UNIQUE_VIOLATION,
    /** The statement was cancelled: a statement timeout or an explicit cancel (57014, MariaDB 1317/1969). */
    STATEMENT_CANCELLED,
    /** The transaction is already aborted; every statement fails until rollback (PostgreSQL 25P02). */
    TRANSACTION_ABORTED,
    /** The connection is gone: killed, closed by the server, or the network failed (class 08, 57P01). */
    CONNECTION_LOST,
    /** Anything else. */
    OTHER
}
