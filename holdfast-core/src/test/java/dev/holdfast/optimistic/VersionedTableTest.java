package dev.holdfast.optimistic;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.DatabaseException;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;

import static dev.holdfast.optimistic.VersionedRows.create;
import static dev.holdfast.optimistic.VersionedRows.dialect;
import static dev.holdfast.optimistic.VersionedRows.insert;
import static dev.holdfast.optimistic.VersionedRows.snapshot;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** The contract of {@link VersionedTable}, run on every database. */
class VersionedTableTest {

    private static VersionedTable orders(TestDatabase db, String table) {
        return VersionedTable.builder(table)
                .entity("order")
                .dialect(dialect(db))
                .build();
    }

    @DatabaseTest
    void updateIncrementsTheVersionAndStampsWhoAndWhenInDatabaseTime(TestDatabase db) throws Exception {
        String table = create(db, "ver");
        insert(db, table, 42, "Old Road 1", 6);
        VersionedTable orders = orders(db, table);
        try (Connection c = db.connection()) {
            Instant before = dialect(db).now(c);
            long version = orders.update(c, 42, 6, "kim", Assignments.of("street", "Main 1"));
            Instant after = dialect(db).now(c);

            assertThat(version).isEqualTo(7);
            VersionStamp stamp = orders.read(c, 42L).orElseThrow();
            assertThat(stamp.version()).isEqualTo(7);
            assertThat(stamp.modifiedBy()).isEqualTo("kim");
            assertThat(stamp.modified()).isBetween(before, after);
            assertThat(db.queryString("SELECT street FROM " + table + " WHERE id = 42"))
                    .isEqualTo("Main 1");
        }
    }

    @DatabaseTest
    void aStaleUpdateWritesNothingAndSaysWhoChangedTheRowAndWhen(TestDatabase db) throws Exception {
        String table = create(db, "ver");
        insert(db, table, 42, "Old Road 1", 6);
        VersionedTable orders = orders(db, table);
        try (Connection kim = db.connection();
                Connection bob = db.connection()) {
            orders.update(kim, 42L, 6, "kim", Assignments.of("street", "Kim Street 7"));
            String before = snapshot(db, table);

            VersionConflictException e = catchThrowableOfType(
                    VersionConflictException.class,
                    () -> orders.update(bob, 42L, 6, "bob", Assignments.of("street", "Bob Lane 2")));

            assertThat(e).isNotNull();
            assertThat(e.entity()).isEqualTo("order");
            assertThat(e.id()).isEqualTo(42L);
            assertThat(e.expectedVersion()).isEqualTo(6);
            assertThat(e.deleted()).isFalse();
            assertThat(e.currentVersion()).contains(7L);
            assertThat(e.modifiedBy()).contains("kim");
            assertThat(e.modified()).isPresent();
            assertThat(e.getMessage())
                    .matches(
                            "order 42 was modified by kim at \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC \\(version 7, you had 6\\)");
            assertThat(snapshot(db, table)).isEqualTo(before);
        }
    }

    @DatabaseTest
    void aDeletedRowIsReportedAsDeleted(TestDatabase db) throws Exception {
        String table = create(db, "ver");
        insert(db, table, 1, "a", 3);
        insert(db, table, 2, "b", 1);
        VersionedTable orders = orders(db, table);
        try (Connection c = db.connection()) {
            assertThatThrownBy(() -> orders.delete(c, 1L, 2))
                    .isInstanceOf(VersionConflictException.class)
                    .hasMessage("order 1 was modified by seed (version 3, you had 2)");
            orders.delete(c, 1L, 3);
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + table)).isEqualTo(1);

            VersionConflictException e = catchThrowableOfType(
                    VersionConflictException.class,
                    () -> orders.update(c, 1L, 3, "bob", Assignments.of("street", "x")));
            assertThat(e.deleted()).isTrue();
            assertThat(e.currentVersion()).isEmpty();
            assertThat(e.modifiedBy()).isEmpty();
            assertThat(e).hasMessage("order 1 was deleted (you had version 3)");
            assertThatThrownBy(() -> orders.delete(c, 1L, 3))
                    .isInstanceOf(VersionConflictException.class)
                    .hasMessage("order 1 was deleted (you had version 3)");
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + table)).isEqualTo(1);
        }
    }

    @DatabaseTest
    void matchVersionRefusesAStaleClientVersionBeforeAnyWork(TestDatabase db) throws Exception {
        String table = create(db, "ver");
        insert(db, table, 42, "a", 6);
        VersionedTable orders = orders(db, table);
        try (Connection c = db.connection()) {
            VersionStamp stamp = orders.matchVersion(c, 42, 6);
            assertThat(stamp.version()).isEqualTo(6);
            assertThat(stamp.modifiedBy()).isEqualTo("seed");

            orders.update(c, 42, 6, "kim", Assignments.none());
            String before = snapshot(db, table);
            assertThatThrownBy(() -> orders.matchVersion(c, 42, 6))
                    .isInstanceOf(VersionConflictException.class)
                    .hasMessageStartingWith("order 42 was modified by kim at ")
                    .hasMessageEndingWith("(version 7, you had 6)");
            assertThatThrownBy(() -> orders.matchVersion(c, 43, 1))
                    .isInstanceOf(VersionConflictException.class)
                    .hasMessage("order 43 was deleted (you had version 1)");
            assertThat(snapshot(db, table)).isEqualTo(before);
        }
    }

    @Test
    void aStampChecksAClientVersionWithoutTheDatabase() {
        VersionStamp stamp = new VersionStamp(7, "kim", Instant.parse("2026-11-21T14:03:59Z"));
        VersionConflictException.requireVersion(stamp, "order", 42, 7);
        assertThatThrownBy(() -> VersionConflictException.requireVersion(stamp, "order", 42, 6))
                .isInstanceOf(VersionConflictException.class)
                .hasMessage("order 42 was modified by kim at 2026-11-21 14:03 UTC (version 7, you had 6)");
        assertThatThrownBy(() -> VersionConflictException.requireVersion(stamp, "order", 42, 9))
                .hasMessage("order 42 was last modified by kim at 2026-11-21 14:03 UTC (version 7, you had 9)");
        assertThatThrownBy(() -> new VersionConflictException(java.util.List.of()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @DatabaseTest
    void badInputIsRefusedBeforeAnySqlAndChangesNothing(TestDatabase db) throws Exception {
        String table = create(db, "ver");
        insert(db, table, 1, "a", 1);
        VersionedTable orders = orders(db, table);
        String before = snapshot(db, table);
        try (Connection c = db.connection()) {
            assertThatThrownBy(() -> orders.update(c, 1L, -1, "kim", Assignments.none()))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> orders.update(c, null, 1, "kim", Assignments.none()))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> orders.update(c, 1L, 1, " ", Assignments.none()))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> orders.update(c, 1L, 1, null, Assignments.none()))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> orders.update(null, 1L, 1, "kim", Assignments.none()))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> orders.update(c, 1L, 1, "kim", Assignments.of("version", 99)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("managed");
            assertThatThrownBy(() -> orders.update(c, 1L, 1, "kim", Assignments.of("MODIFIED_BY", "x")))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> orders.update(c, 1L, 1, "kim", Assignments.of("id", 2)))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> Assignments.of("street = 'x', version", 1))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> Assignments.of("street", 1).and("STREET", 2))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> orders.update(c, new Object(), 1, "kim", Assignments.none()))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> orders.delete(c, 1L, -5)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> VersionedTable.builder("t; DROP TABLE x"))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> VersionedTable.builder(table)
                            .versionColumn("id")
                            .dialect(Dialect.H2)
                            .build())
                    .isInstanceOf(IllegalArgumentException.class);
            // A value is bound, never SQL: this is stored verbatim.
            orders.update(c, 1L, 1, "kim", Assignments.of("street", "x'; DROP TABLE " + table + "; --"));
        }
        assertThat(db.queryString("SELECT street FROM " + table + " WHERE id = 1"))
                .isEqualTo("x'; DROP TABLE " + table + "; --");
        assertThat(before).isNotEqualTo(snapshot(db, table));
    }

    @DatabaseTest
    void theExplanationSeesTheLatestCommittedRowInsideAnOlderTransaction(TestDatabase db) throws Exception {
        String table = create(db, "ver");
        insert(db, table, 5, "a", 1);
        VersionedTable orders = orders(db, table);
        try (Connection a = db.connection();
                Connection b = db.connection()) {
            a.setAutoCommit(false);
            try {
                // A's snapshot (REPEATABLE READ on MariaDB) shows version 1 from here on.
                assertThat(orders.read(a, 5L).orElseThrow().version()).isEqualTo(1);
                orders.update(b, 5L, 1, "bob", Assignments.of("street", "b"));

                VersionConflictException e = catchThrowableOfType(
                        VersionConflictException.class,
                        () -> orders.update(a, 5L, 1, "ann", Assignments.of("street", "a2")));
                assertThat(e.currentVersion()).contains(2L);
                assertThat(e.modifiedBy()).contains("bob");
                // The conflict left A's transaction usable.
                orders.update(a, 5L, 2, "ann", Assignments.of("street", "a3"));
                a.commit();
            } finally {
                a.rollback();
                a.setAutoCommit(true);
            }
        }
        assertThat(db.queryString("SELECT street FROM " + table + " WHERE id = 5"))
                .isEqualTo("a3");
        assertThat(db.queryLong("SELECT version FROM " + table + " WHERE id = 5"))
                .isEqualTo(3);
    }

    @DatabaseTest
    void anSqlFailureRollsTheTransactionBackSoNoHalfCommitSurvives(TestDatabase db) throws Exception {
        String table = create(db, "ver");
        insert(db, table, 1, "a", 1);
        insert(db, table, 2, "b", 1);
        VersionedTable orders = orders(db, table);
        try (Connection c = db.connection()) {
            c.setAutoCommit(false);
            try {
                orders.update(c, 2L, 1, "kim", Assignments.of("street", "marker"));
                assertThatThrownBy(() -> orders.update(c, 1L, 1, "kim", Assignments.of("no_such_column", 1)))
                        .isInstanceOf(DatabaseException.class)
                        .hasMessageContaining("rolled back");
                c.commit();
            } finally {
                c.rollback();
                c.setAutoCommit(true);
            }
        }
        assertThat(db.queryString("SELECT street FROM " + table + " WHERE id = 2"))
                .isEqualTo("b");
    }

    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void mariaDbAffectedRowsModeStillCountsAMatchedRow(TestDatabase db) throws Exception {
        String table = create(db, "ver");
        insert(db, table, 1, "same", 1);
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(db.kind().url() + (db.kind().url().contains("?") ? "&" : "?") + "useAffectedRows=true");
        config.setUsername(db.kind().user());
        config.setPassword(db.kind().password());
        config.setMaximumPoolSize(1);
        try (HikariDataSource pool = new HikariDataSource(config);
                Connection c = pool.getConnection()) {
            try (Statement s = c.createStatement()) {
                // The fact this guards against: an unchanged row counts 0 in this mode.
                assertThat(s.executeUpdate("UPDATE " + table + " SET street = 'same' WHERE id = 1"))
                        .isZero();
            }
            VersionedTable orders = orders(db, table);
            // Same street value: still a success, because the version always changes.
            assertThat(orders.update(c, 1L, 1, "kim", Assignments.of("street", "same")))
                    .isEqualTo(2);
            assertThatThrownBy(() -> orders.update(c, 1L, 1, "kim", Assignments.of("street", "same")))
                    .isInstanceOf(VersionConflictException.class);
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT version FROM " + table)) {
                rs.next();
                assertThat(rs.getLong(1)).isEqualTo(2);
            }
        }
    }

    @Test
    void aTableWithoutItsDialectIsRefusedWhenBuilt() {
        assertThatThrownBy(
                        () -> VersionedTable.builder("orders").entity("order").build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("dialect");
    }
}
