package dev.holdfast.optimistic;

import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.testing.TestDatabase;

import java.sql.SQLException;

/** Test tables with the optimistic-lock columns, per database. */
public final class VersionedRows {

    private VersionedRows() {}

    /** {@code (id BIGINT PK, street VARCHAR, counter BIGINT, version, modified_by, modified)}. */
    public static String create(TestDatabase db, String prefix) throws SQLException {
        String table = db.newTableName(prefix);
        String timestamp = switch (db.kind()) {
            case H2 -> "TIMESTAMP WITH TIME ZONE";
            case POSTGRESQL -> "TIMESTAMPTZ";
            case MARIADB -> "DATETIME(6)";
        };
        db.execute("CREATE TABLE " + table
                + " (id BIGINT PRIMARY KEY, street VARCHAR(200), counter BIGINT NOT NULL DEFAULT 0,"
                + " version BIGINT NOT NULL, modified_by VARCHAR(100), modified " + timestamp + ")");
        new SchemaInstaller(db.dataSource()).installClock();
        return table;
    }

    /** Inserts row {@code id} with {@code street} at {@code version}, written by "seed". */
    public static void insert(TestDatabase db, String table, long id, String street, long version) throws SQLException {
        db.execute(
                "INSERT INTO " + table + " (id, street, version, modified_by) VALUES (?, ?, ?, 'seed')",
                id,
                street,
                version);
    }

    public static Dialect dialect(TestDatabase db) {
        return Dialect.fromProductName(db.kind().id());
    }

    /** A whole row as text, to show that a refused operation changed nothing. */
    public static String snapshot(TestDatabase db, String table) throws SQLException {
        StringBuilder s = new StringBuilder();
        try (var c = db.connection();
                var st = c.createStatement();
                var rs = st.executeQuery(
                        "SELECT id, street, counter, version, modified_by, modified FROM " + table + " ORDER BY id")) {
            while (rs.next()) {
                for (int i = 1; i <= 6; i++) {
                    s.append(rs.getString(i)).append(i < 6 ? "|" : "\n");
                }
            }
        }
        return s.toString();
    }
}
