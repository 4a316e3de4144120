package dev.holdfast.optimistic;

import dev.holdfast.jdbc.SqlIdentifier;
import dev.holdfast.jdbc.dialect.Dialect;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The SQL of one {@link VersionedTable}, per dialect. Only validated identifiers and the
 * dialect's clock expression are placed in the text; every value is a bound parameter.
 */
final class VersionedSql {

    private final Dialect dialect;
    private final String table;
    private final String id;
    private final String version;
    private final String modifiedBy;
    private final String modified;

    VersionedSql(
            Dialect dialect,
            SqlIdentifier table,
            SqlIdentifier id,
            SqlIdentifier version,
            SqlIdentifier modifiedBy,
            SqlIdentifier modified) {
        this.dialect = dialect;
        this.table = table.value();
        this.id = id.value();
        this.version = version.value();
        this.modifiedBy = modifiedBy.value();
        this.modified = modified.value();
    }

    /**
     * The conditional update. The caller's assignments come first and only bind values, so no
     * assignment reads {@code version}: MariaDB evaluates assignments left to right and would
     * otherwise see the new version (docs/database-facts.md, update counts). Because
     * {@code version} always changes, a matched row counts 1 on every database, also with MariaDB's
     * {@code useAffectedRows=true}.
     */
    /** Statements by assigned columns: a table is updated with few column sets, over and over. */
    private final ConcurrentMap<List<SqlIdentifier>, String> updates = new ConcurrentHashMap<>();

    String update(Assignments changes) {
        List<SqlIdentifier> columns = changes.columns();
        String cached = updates.get(columns);
        if (cached != null) {
            return cached;
        }
        String built = buildUpdate(columns);
        if (updates.size() < 256) {
            updates.putIfAbsent(columns, built);
        }
        return built;
    }

    private String buildUpdate(List<SqlIdentifier> columns) {
        StringBuilder sql = new StringBuilder("UPDATE ").append(table).append(" SET ");
        for (SqlIdentifier column : columns) {
            sql.append(column.value()).append(" = ?, ");
        }
        return sql.append(version)
                .append(" = ")
                .append(version)
                .append(" + 1, ")
                .append(modifiedBy)
                .append(" = ?, ")
                .append(modified)
                .append(" = ")
                .append(dialect.clock())
                .append(" WHERE ")
                .append(id)
                .append(" = ? AND ")
                .append(version)
                .append(" = ?")
                .toString();
    }

    String delete() {
        return "DELETE FROM " + table + " WHERE " + id + " = ? AND " + version + " = ?";
    }

    String read() {
        return "SELECT " + version + ", " + modifiedBy + ", " + modified + " FROM " + table + " WHERE " + id + " = ?";
    }

    /**
     * Reads the stamp after a conditional write matched nothing. On MariaDB a plain SELECT inside a
     * REPEATABLE READ transaction reads the transaction's snapshot, which may still show the
     * expected version; a locking read sees the latest committed row, as the UPDATE did.
     * PostgreSQL and H2 at READ COMMITTED see it with a plain SELECT.
     */
    String explain() {
        return switch (dialect) {
            case H2, POSTGRESQL -> read();
            case MARIADB -> read() + " LOCK IN SHARE MODE";
        };
    }

    /**
     * Reads the stamp of a row that was only read and keeps it unchanged until the transaction
     * ends. A shared lock, not a no-op UPDATE: other readers are not blocked, and MariaDB with
     * {@code useAffectedRows=true} counts an unchanged row as 0. H2 has no shared row locks, so it
     * takes the exclusive one.
     */
    String verify() {
        return switch (dialect) {
            case H2 -> read() + " FOR UPDATE";
            case POSTGRESQL -> read() + " FOR SHARE";
            case MARIADB -> read() + " LOCK IN SHARE MODE";
        };
    }
}
