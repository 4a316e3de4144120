package dev.holdfast.pessimistic;

import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link PessimisticLocks#forUpdateAll} is deadlock-free however two callers spell the same tables
 * and columns. Each caller stops after its first row until the other has taken its first row too
 * (or 2 s passed, when the other is blocked on it): ordered by raw spelling, they would each hold
 * the row the other needs next.
 */
class ForUpdateAllSpellingTest {

    /** How each of two callers names table a, table b and the key column. */
    private record Spelling(String a, String b, String column) {}

    private static String[] tables(TestDatabase db) throws SQLException {
        String a = db.newTableName("a_spell");
        String b = db.newTableName("b_spell");
        for (String t : List.of(a, b)) {
            db.execute("CREATE TABLE " + t + " (id BIGINT PRIMARY KEY, val BIGINT NOT NULL)");
            db.execute("INSERT INTO " + t + " (id, val) VALUES (1, 0), (2, 0)");
        }
        return new String[] {a, b};
    }

    // PostgreSQL folds unquoted names to lower case, H2 to upper case: "B_SPELL_x" is b_spell_x.
    // (MariaDB table names are case-sensitive with lower_case_table_names=0, this server's setting.)
    @DatabaseTest(only = {TestDatabase.Kind.H2, TestDatabase.Kind.POSTGRESQL})
    void twoCallersSpellingATableInDifferentCaseNeverDeadlock(TestDatabase db) throws Exception {
        String[] t = tables(db);
        // Raw order: "B_…" < "a_…" < "b_…": the first caller would lock b then a, the second a then b.
        assertNoDeadlock(
                db, t, new Spelling(t[0], t[1].toUpperCase(Locale.ROOT), "id"), new Spelling(t[0], t[1], "id"));
    }

    @DatabaseTest
    void twoCallersQualifyingATableDifferentlyNeverDeadlock(TestDatabase db) throws Exception {
        String[] t = tables(db);
        String schema = currentSchema(db);
        // Raw order: "a_…" < "b_…" < "<schema>.a_…" < "<schema>.b_…" (lower-case schemas here;
        // H2's PUBLIC sorts first, so there the qualified table is b for one caller and a for the other).
        assertNoDeadlock(
                db, t, new Spelling(t[0], schema + "." + t[1], "id"), new Spelling(schema + "." + t[0], t[1], "id"));
    }

    // Column names never depend on case on any of the three databases.
    @DatabaseTest
    void twoCallersSpellingTheKeyColumnInDifferentCaseNeverDeadlock(TestDatabase db) throws Exception {
        String table = tables(db)[0];
        // One table, rows 1 and 2: raw order "ID" < "id", so the spelling decides which row comes first.
        assertNoDeadlockOnRows(
                db,
                List.of(RowRef.of(table, "id", 1L), RowRef.of(table, "ID", 2L)),
                List.of(RowRef.of(table, "ID", 1L), RowRef.of(table, "id", 2L)));
    }

    // One call naming one row with and without its schema reads the current schema and locks it once.
    @DatabaseTest
    void oneRowNamedWithAndWithoutItsSchemaIsLockedOnce(TestDatabase db) throws Exception {
        String table = tables(db)[0];
        String qualified = currentSchema(db) + "." + table;
        PessimisticLocks locks = PessimisticLocks.of(db.dataSource());
        try (Connection c = db.dataSource().getConnection()) {
            c.setAutoCommit(false);
            try {
                List<RowRef> locked = locks.forUpdateAll(
                        c,
                        List.of(
                                RowRef.of(qualified, 2L),
                                RowRef.of(table, 1L),
                                RowRef.of(table, 2L),
                                RowRef.of(qualified, 1L)),
                        LockWait.atMost(Duration.ofSeconds(2)));
                assertThat(locked).containsExactly(RowRef.of(table, 1L), RowRef.of(qualified, 2L));
            } finally {
                c.rollback();
                c.setAutoCommit(true);
            }
        }
    }

    private static void assertNoDeadlock(TestDatabase db, String[] t, Spelling first, Spelling second)
            throws Exception {
        assertNoDeadlockOnRows(
                db,
                List.of(RowRef.of(first.a(), first.column(), 1L), RowRef.of(first.b(), first.column(), 1L)),
                List.of(RowRef.of(second.a(), second.column(), 1L), RowRef.of(second.b(), second.column(), 1L)));
    }

    private static void assertNoDeadlockOnRows(TestDatabase db, List<RowRef> first, List<RowRef> second)
            throws Exception {
        CountDownLatch bothHaveAFirstRow = new CountDownLatch(2);
        ThreadLocal<Boolean> pausedOnce = ThreadLocal.withInitial(() -> false);
        PessimisticLocks locks = PessimisticLocks.of(db.dataSource())
                .observedBy((row, wait, waited, locked, failure) -> {
                    if (locked && !pausedOnce.get()) {
                        pausedOnce.set(true);
                        bothHaveAFirstRow.countDown();
                        try {
                            bothHaveAFirstRow.await(2, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                });
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            Future<String> one = threads.submit(() -> lockAll(db, locks, first));
            Future<String> two = threads.submit(() -> lockAll(db, locks, second));
            List<String> outcomes = List.of(one.get(60, TimeUnit.SECONDS), two.get(60, TimeUnit.SECONDS));
            System.out.printf("[%s] %s vs %s: %s%n", db.id(), first, second, outcomes);
            assertThat(outcomes).containsOnly("committed");
        } finally {
            threads.shutdownNow();
        }
    }

    private static String lockAll(TestDatabase db, PessimisticLocks locks, List<RowRef> rows) throws Exception {
        try (Connection c = db.dataSource().getConnection()) {
            c.setAutoCommit(false);
            try {
                List<RowRef> locked = locks.forUpdateAll(c, rows, LockWait.atMost(Duration.ofSeconds(20)));
                assertThat(locked).hasSize(2);
                c.commit();
                return "committed";
            } catch (DeadlockException e) {
                return "deadlock victim";
            } catch (LockTimeoutException e) {
                return "timed out";
            } finally {
                c.rollback();
                c.setAutoCommit(true);
            }
        }
    }

    private static String currentSchema(TestDatabase db) throws SQLException {
        return db.queryString(
                switch (db.kind()) {
                    case H2 -> "SELECT CURRENT_SCHEMA";
                    case POSTGRESQL -> "SELECT current_schema()";
                    case MARIADB -> "SELECT DATABASE()";
                });
    }
}
