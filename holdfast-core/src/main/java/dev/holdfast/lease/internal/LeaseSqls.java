package dev.holdfast.lease;

import dev.holdfast.jdbc.dialect.Dialect;

/** The lease statements of each database. */
final class LeaseSqls {

    private LeaseSqls() {
    }

    static LeaseSql forDialect(Dialect dialect, String table) {
        return switch (dialect) {
            case H2 -> new H2LeaseSql(table);
            case POSTGRESQL -> new PgLeaseSql(table);
            case MARIADB -> new MariaDbLeaseSql(table);
        };
    }
}
