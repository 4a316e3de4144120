package dev.holdfast.lease.internal;

import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.jdbc.internal.Jdbc;
import dev.holdfast.jdbc.internal.Retry;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * How a lease statement runs: on a pooled connection in auto-commit, its failure a
 * {@code DatabaseException} that names the lease; an acquire that lost a race with a concurrent first
 * insert or an InnoDB gap-lock deadlock (which had no effect) runs again on a new connection.
 */
final class LeaseCalls {

    /** Attempts of an acquire that keeps losing races, or of a MariaDB hand-off that keeps losing deadlocks, before its failure is raised. */
    static final int ATTEMPTS_ON_RACE = 3;

    /** One statement's work on a connection. */
    @FunctionalInterface
    interface SqlCall<T> {
        T run(Connection c) throws SQLException;
    }

    private final DataSource dataSource;
    private final Dialect dialect;
    private final Retry races;
    private final LeaseStore store;

    LeaseCalls(DataSource dataSource, Dialect dialect, LeaseStore store) {
        this.dataSource = dataSource;
        this.dialect = dialect;
        this.store = store;
        this.races = new Retry(dialect, Retry.RACES, ATTEMPTS_ON_RACE, () -> {});
    }

    DataSource dataSource() {
        return dataSource;
    }

    Dialect dialect() {
        return dialect;
    }

    Retry races() {
        return races;
    }

    /** Runs {@code call} about lease {@code name} ("{@code what} lease 'name'" in a failure). */
    <T> T call(String what, String name, SqlCall<T> call) {
        return Jdbc.autocommit(dataSource, () -> what + " lease '" + name + "'", call::run);
    }

    /** Runs an acquire, retrying a lost race on a new connection. */
    Optional<LeaseRow> acquire(String name, String owner, SqlCall<Optional<LeaseRow>> call) {
        return races.autocommit(
                dataSource, null, () -> "acquiring lease '" + name + "' for '" + owner + "'", call::run);
    }

    /** The single-row acquire: exclusive, or re-entering a grant {@code owner} holds already. */
    Optional<LeaseRow> acquire(String name, String owner, long ttlMicros, boolean reentrant) {
        return acquire(name, owner, c -> store.acquire(c, name, owner, ttlMicros, reentrant));
    }

    /** Whether {@code e} is a lost race: the statement had no effect and may run again. */
    boolean isRace(SQLException e) {
        return Retry.RACES.contains(dialect.classify(e));
    }
}
