package dev.holdfast.lease.internal;

import dev.holdfast.jdbc.dialect.Dialect;

/**
 * The lease store of each database: the one place that chooses it, by an exhaustive {@code switch} on
 * {@link Dialect} (a new dialect does not compile until it has a store).
 */
public final class LeaseStores {

    private LeaseStores() {}

    /** The store of {@code dialect}'s leases in {@code table}: no failover grace, the server's own timeline. */
    public static LeaseStore forDialect(Dialect dialect, String table) {
        return forDialect(dialect, table, 0, 0);
    }

    /**
     * The store of {@code dialect}'s leases in {@code table}.
     *
     * @param graceMicros the failover grace (PostgreSQL), 0 for none
     * @param timeline    PostgreSQL: the timeline the statements take as the server's, 0 for the server's own
     */
    public static LeaseStore forDialect(Dialect dialect, String table, long graceMicros, int timeline) {
        return switch (dialect) {
            case H2 -> new H2LeaseStore(new H2LeaseSql(table));
            case POSTGRESQL ->
                new PgLeaseStore(new PgLeaseSql(
                        table, graceMicros, timeline == 0 ? PgLeaseSql.TIMELINE : Integer.toString(timeline)));
            case MARIADB -> new MariaDbLeaseStore(new MariaDbLeaseSql(table));
        };
    }

    /** The store a service with these settings uses. */
    static LeaseStore forSettings(LeaseSettings s) {
        return forDialect(
                s.dialect(), s.table(), s.failoverGraceMicros(), s.tuning().timeline());
    }
}
