package dev.holdfast.lease;

import dev.holdfast.DatabaseException;
import dev.holdfast.internal.Arguments;
import dev.holdfast.internal.Invariants;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.jdbc.internal.Jdbc;
import dev.holdfast.lease.internal.LeaseArguments;
import dev.holdfast.lease.internal.LeaseRow;
import dev.holdfast.lease.internal.LeaseSql;
import dev.holdfast.lease.internal.LeaseStores;
import org.jspecify.annotations.Nullable;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * The leases of a {@link LeaseService}'s table as operators page through them: live leases and the
 * queued waiters of blocking acquires, a page at a time, so that a table of any size is read in
 * bounded pieces ({@link Leases#list()} reads every live lease at once). Each call is one
 * statement on a connection of its own, in auto-commit mode. Thread-safe.
 */
public final class LeaseView {

    /** The most rows one call returns. */
    public static final int MAX_LIMIT = 10_000;

    private final DataSource dataSource;
    private final Dialect dialect;
    private final LeaseSql sql;

    private LeaseView(DataSource dataSource, Dialect dialect, String table) {
        this.dataSource = dataSource;
        this.dialect = dialect;
        this.sql = LeaseStores.forDialect(dialect, table).sql();
    }

    /**
     * The view of {@code leases}' table, read through {@code dataSource} (the pool the service
     * was built on).
     *
     * @param dataSource the pool to read through, which reaches the service's database
     * @param leases     the service whose table and dialect the view reads
     * @return the view; it holds no connection between calls
     * @throws IllegalArgumentException if an argument is null
     */
    public static LeaseView of(DataSource dataSource, LeaseService leases) {
        Arguments.notNull(dataSource, "dataSource");
        Arguments.notNull(leases, "leases");
        return new LeaseView(dataSource, leases.dialect(), leases.table());
    }

    /**
     * Live leases by name, those after {@code afterName}, at most {@code limit}.
     *
     * @param afterName the last name of the previous page, or null for the first page
     * @param limit     1 to {@value #MAX_LIMIT}
     * @return the live leases after {@code afterName}, ordered by name as the database sorts it, at
     *         most {@code limit}; empty if there are none
     * @throws IllegalArgumentException for an invalid name or limit
     * @throws DatabaseException        if the database failed
     */
    public List<Lease> live(@Nullable String afterName, int limit) {
        checkLimit(limit);
        if (afterName != null) {
            LeaseArguments.checkName("afterName", afterName);
        }
        return Jdbc.autocommit(dataSource, "listing leases", c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.livePageSql(afterName != null))) {
                int i = 1;
                if (afterName != null) {
                    ps.setString(i++, afterName);
                }
                ps.setInt(i, limit);
                List<Lease> leases = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        leases.add(Lease.of(new LeaseRow(
                                rs.getString(1), rs.getString(2), rs.getLong(3), instant(rs, 4), instant(rs, 5))));
                    }
                }
                return leases;
            }
        });
    }

    /**
     * The live waiters of the queue, by lease name and then place, those after {@code afterName}'s
     * {@code afterPlace}, at most {@code limit}.
     *
     * @param name       only the waiters of this lease, or null for all
     * @param afterName  the name of the last waiter of the previous page, or null for the first page
     * @param afterPlace the place of the last waiter of the previous page (ignored without {@code afterName})
     * @param limit      1 to {@value #MAX_LIMIT}
     * @return the live waiters after {@code afterName}'s {@code afterPlace}, ordered by lease name as
     *         the database sorts it and then by place, at most {@code limit}; empty if there are none
     * @throws IllegalArgumentException for an invalid name, place or limit
     * @throws DatabaseException        if the database failed
     */
    public List<LeaseWaiter> waiters(@Nullable String name, @Nullable String afterName, int afterPlace, int limit) {
        checkLimit(limit);
        if (name != null) {
            LeaseArguments.checkName("name", name);
        }
        if (afterName != null) {
            LeaseArguments.checkName("afterName", afterName);
            if (afterPlace < 0) {
                throw new IllegalArgumentException("afterPlace must not be negative, not " + afterPlace);
            }
        }
        return Jdbc.autocommit(dataSource, "listing lease waiters", c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.waitersSql(name != null, afterName != null))) {
                int i = 1;
                if (name != null) {
                    ps.setString(i++, name);
                }
                if (afterName != null) {
                    ps.setString(i++, afterName);
                    ps.setString(i++, afterName);
                    ps.setInt(i++, afterPlace);
                }
                ps.setInt(i, limit);
                List<LeaseWaiter> waiters = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        waiters.add(new LeaseWaiter(
                                rs.getString(1),
                                rs.getInt(2),
                                rs.getString(3),
                                dialect.readInstant(rs, 4),
                                instant(rs, 5)));
                    }
                }
                return waiters;
            }
        });
    }

    private Instant instant(ResultSet rs, int column) throws SQLException {
        return Invariants.nonNull(dialect.readInstant(rs, column), "a NOT NULL time column read NULL");
    }

    private static void checkLimit(int limit) {
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new IllegalArgumentException("limit must be 1 to " + MAX_LIMIT + ", not " + limit);
        }
    }
}
