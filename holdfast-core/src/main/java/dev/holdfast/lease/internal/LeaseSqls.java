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
}
