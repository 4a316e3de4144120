package dev.holdfast.lease.internal;

import dev.holdfast.jdbc.dialect.Dialect;

/** The lease statements of each database. */
public final class LeaseSqls {

    private LeaseSqls() {
    }

    public static LeaseSql forDialect(Dialect dialect, String table) {
        return switch (dialect) {
            case H2 -> new H2LeaseSql(table);
            case POSTGRESQL -> new PgLeaseSql(table);
            case MARIADB -> new MariaDbLeaseSql(table);
        };
    }

    /** The statements a service with these settings runs. */
    static LeaseSql forSettings(LeaseSettings s) {
        return forDialect(s.dialect(), s.table(), s.failoverGraceMicros(), s.tuning().timeline());
    }

    /**
     * @param graceMicros the failover grace (PostgreSQL), 0 for none
     * @param timeline    PostgreSQL: the timeline the statements take as the server's, 0 for the server's own
     */
    public static LeaseSql forDialect(Dialect dialect, String table, long graceMicros, int timeline) {
        if (dialect == Dialect.POSTGRESQL) {
            return new PgLeaseSql(table, graceMicros, timeline == 0 ? PgLeaseSql.TIMELINE : Integer.toString(timeline));
        }
        return forDialect(dialect, table);
    }
}
