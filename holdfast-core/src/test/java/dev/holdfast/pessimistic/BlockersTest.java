package dev.holdfast.pessimistic;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.pessimistic.BlockingSessions.Session;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;
import java.util.logging.Logger;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@link LockTimeoutException} names the sessions that blocked it, on every database: one, two
 * and three blockers, directly or in a chain (A blocks B blocks the caller), and the bound still
 * holds; when they cannot be told (a role that may not see other sessions, no data source, a
 * no-wait lock, an exhausted pool) the timeout says why.
 */
class BlockersTest {

    private static final Duration BOUND = Duration.ofSeconds(1);
    /** Generous, for a loaded machine; the measured margins are printed and in docs/reference.md. */
    private static final Duration MARGIN = Duration.ofSeconds(1);

    /** The outcome of one lock call that must time out. */
    private record Timeout(LockTimeoutException exception, Duration elapsed, String waiter) {
        Blockers blockers() {
            return exception.blockers();
        }

        List<String> ids() {
            return blockers().sessions().stream().map(Blocker::sessionId).toList();
        }

        List<String> blocks() {
            return blockers().sessions().stream().map(Blocker::blocks).toList();
        }
    }

    /** Locks {@code row} with the bound on a new connection of {@code pool}, which must time out. */
    private static Timeout timeout(TestDatabase db, DataSource pool, PessimisticLocks locks, String what, LockCall call)
            throws SQLException {
        try (Connection waiter = pool.getConnection()) {
            waiter.setAutoCommit(false);
            String id = BlockingSessions.sessionId(db, waiter);
            String settings = PessimisticLocksTest.lockSettings(waiter, db);
            LockTimeoutException e = null;
            long start = System.nanoTime();
            try {
                call.lock(waiter);
            } catch (LockTimeoutException timeout) {
                e = timeout;
            }
            Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
            assertThat(e).as("lock timeout").isNotNull();
            System.out.printf(
                    "[%s] %s: %d ms for a %d ms bound (margin %d ms, lock statement %d ms); %s%n",
                    db.id(),
                    what,
                    elapsed.toMillis(),
                    e.bound().toMillis(),
                    elapsed.minus(e.bound()).toMillis(),
                    e.waited().toMillis(),
                    e.blockers());
            // the pooled connection leaves clean: back at the server's settings, and usable
            assertThat(PessimisticLocksTest.lockSettings(waiter, db)).isEqualTo(settings);
            waiter.rollback();
            waiter.setAutoCommit(true);
            return new Timeout(e, elapsed, id);
        }
    }

    @FunctionalInterface
    private interface LockCall {
        void lock(Connection waiter);
    }

    private static LockCall forUpdate(PessimisticLocks locks, String table, long id, LockWait wait) {
        return c -> locks.forUpdate(c, RowRef.of(table, id), wait);
    }

    /**
     * Through PgBouncer pgjdbc learns a process id of the pooler's own, so the server cannot say who
     * blocks it: the timeout says so, and what to do, instead of naming blockers. True there, and
     * the caller asserts no more.
     */
    private static boolean throughPooler(TestDatabase db, Timeout t) {
        if (!db.entry().pooled()) {
            return false;
        }
        assertThat(t.blockers().known()).as(t.blockers().toString()).isFalse();
        assertThat(t.blockers().unknownBecause()).contains("connection pooler").contains("connect directly");
        return true;
    }

    private static void assertWithinBound(Timeout t) {
        assertThat(t.elapsed()).isGreaterThanOrEqualTo(BOUND.minusMillis(5)).isLessThan(BOUND.plus(MARGIN));
    }

    private static void assertDescribes(TestDatabase db, Blocker b, Session s, Supplier<String> statementLike) {
        assertThat(b.sessionId()).isEqualTo(s.id());
        assertThat(b.user()).isEqualToIgnoringCase(db.kind().user());
        assertThat(b.state()).isNotBlank();
        switch (db.kind()) {
            case POSTGRESQL -> {
                assertThat(b.applicationName()).isEqualTo("holdfast-test-" + s.name());
                assertThat(b.clientAddress()).isEqualTo("127.0.0.1");
                assertThat(b.transactionStart()).isBefore(Instant.now());
            }
            case MARIADB -> {
                assertThat(b.applicationName()).isNull();
                assertThat(b.clientAddress()).startsWith("127.0.0.1:");
                assertThat(b.transactionStart()).isBeforeOrEqualTo(Instant.now());
            }
            case H2 -> assertThat(b.transactionStart()).isNull();
        }
        String statement = statementLike.get();
        if (statement != null) {
            assertThat(b.statement()).containsIgnoringCase(statement);
        }
        if (b.statement() != null) {
            assertThat(b.statement()).doesNotContain("secret").doesNotContain("'v");
        }
    }

    @DatabaseTest
    void oneBlocker(TestDatabase db) throws Exception {
        try (BlockingSessions s = new BlockingSessions(db, 2)) {
            Session a = s.begin("a");
            s.lock(a, 1);
            PessimisticLocks locks = PessimisticLocks.of(db.dataSource());

            Timeout t = timeout(
                    db, db.dataSource(), locks, "one blocker", forUpdate(locks, s.table, 1, LockWait.atMost(BOUND)));

            assertWithinBound(t);
            if (throughPooler(db, t)) {
                return;
            }
            assertThat(t.blockers().known()).as(t.blockers().toString()).isTrue();
            assertThat(t.blockers().waitingSession()).isEqualTo(t.waiter());
            assertThat(t.ids()).containsExactly(a.id());
            assertThat(t.blockers().direct()).hasSize(1);
            assertThat(t.blockers().omitted()).isZero();
            // PostgreSQL shows an idle session's last statement; MariaDB and H2 show none.
            assertDescribes(
                    db,
                    t.blockers().sessions().get(0),
                    a,
                    () -> db.kind() == TestDatabase.Kind.POSTGRESQL ? "FOR UPDATE" : null);
            assertThat(t.exception()).hasMessageContaining("blocked by session " + a.id());
        }
    }

    /** The example of the guide and the reference. */
    @DatabaseTest
    void theDocumentedExampleNamesWhoHoldsTheRow(TestDatabase db) throws Exception {
        try (BlockingSessions s = new BlockingSessions(db, 1)) {
            Session a = s.begin("a");
            s.lock(a, 1);
            PessimisticLocks locks = PessimisticLocks.of(db.dataSource());
            RowRef row = RowRef.of(s.table, 1L);
            Logger log = Logger.getLogger(BlockersTest.class.getName());
            List<String> holders = new ArrayList<>();
            try (Connection connection = db.connection()) {
                connection.setAutoCommit(false);
                // tag::lock-timeout-blockers[]
                try {
                    locks.forUpdate(connection, row, LockWait.atMost(Duration.ofSeconds(1)));
                } catch (LockTimeoutException e) {
                    // "blocked by session 4711 [user shop, application shop-web, …]" or "blockers unknown: <why>"
                    log.warning(e.blockers().toString());
                    for (Blocker b : e.blockers().direct()) {
                        holders.add(b.applicationName() + " (session " + b.sessionId() + ")");
                    }
                }
                // end::lock-timeout-blockers[]
                connection.setAutoCommit(true);
            }
            if (db.entry().pooled()) {
                assertThat(holders)
                        .as("through PgBouncer the blockers are unknown")
                        .isEmpty();
                return;
            }
            assertThat(holders).hasSize(1).first().asString().endsWith("(session " + a.id() + ")");
        }
    }

    @DatabaseTest
    void twoBlockersInAChain(TestDatabase db) throws Exception {
        try (BlockingSessions s = new BlockingSessions(db, 3)) {
            Session a = s.begin("a");
            Session b = s.begin("b");
            s.lock(a, 1);
            s.lock(b, 2);
            s.waitFor(b, 1); // A blocks B
            PessimisticLocks locks = PessimisticLocks.of(db.dataSource());

            Timeout t = timeout(
                    db,
                    db.dataSource(),
                    locks,
                    "a chain of two",
                    forUpdate(locks, s.table, 2, LockWait.atMost(BOUND))); // B blocks the caller

            assertWithinBound(t);
            if (throughPooler(db, t)) {
                return;
            }
            assertThat(t.ids()).as(t.blockers().toString()).containsExactly(b.id(), a.id());
            assertThat(t.blocks()).containsExactly(t.waiter(), b.id());
            assertThat(t.blockers().direct()).extracting(Blocker::sessionId).containsExactly(b.id());
            assertDescribes(db, t.blockers().sessions().get(0), b, () -> "FOR UPDATE");
            assertDescribes(db, t.blockers().sessions().get(1), a, () -> null);
        }
    }

    /**
     * A blocker's statement with an apostrophe in a comment, or a string that ends in a backslash,
     * shows none of its literals (they were shown in clear before comments and per-database escape
     * rules were read).
     */
    @DatabaseTest
    void aBlockersStatementShowsNoLiteralWhateverItsCommentsAndEscapes(TestDatabase db) throws Exception {
        String backslash = db.kind() == TestDatabase.Kind.MARIADB ? "'C:\\\\'" : "'C:\\'"; // MariaDB escapes it
        List<String> statements = List.of(
                "SELECT val FROM %s /* the customer's note */ WHERE id = ? AND val <> 'Cmt-S3cr3t' FOR UPDATE",
                "SELECT val FROM %s -- isn't it\n WHERE id = ? AND val <> 'Cmt-S3cr3t' FOR UPDATE",
                "SELECT val FROM %s WHERE id = ? AND val <> " + backslash + " AND val <> 'Bs-S3cr3t' FOR UPDATE");
        for (String statement : statements) {
            try (BlockingSessions s = new BlockingSessions(db, 2)) {
                Session a = s.begin("a");
                Session b = s.begin("b");
                s.lock(a, 1);
                s.lock(b, 2);
                s.waitFor(b, 1, statement); // A blocks B, which runs the statement
                PessimisticLocks locks = PessimisticLocks.of(db.dataSource());

                Timeout t = timeout(
                        db,
                        db.dataSource(),
                        locks,
                        "a statement with comments and escapes",
                        forUpdate(locks, s.table, 2, LockWait.atMost(BOUND)));

                if (throughPooler(db, t)) {
                    return;
                }
                assertThat(t.ids()).as(t.blockers().toString()).startsWith(b.id());
                String shown = t.blockers().sessions().get(0).statement();
                String id =
                        db.kind() == TestDatabase.Kind.POSTGRESQL ? "$1" : "?"; // a bind value; written in, or listed
                assertThat(shown)
                        .as(statement)
                        .isEqualTo("SELECT val FROM " + s.table + " WHERE id = " + id + " AND val <> ?"
                                + (statement.contains("C:") ? " AND val <> ?" : "") + " FOR UPDATE");
                assertThat(t.exception().getMessage()).doesNotContain("S3cr3t").doesNotContain("C:");
            }
        }
    }

    @DatabaseTest
    void threeBlockersInAChain(TestDatabase db) throws Exception {
        try (BlockingSessions s = new BlockingSessions(db, 4)) {
            Session a = s.begin("a");
            Session b = s.begin("b");
            Session c = s.begin("c");
            s.lock(a, 1);
            s.lock(b, 2);
            s.lock(c, 3);
            s.waitFor(b, 1);
            s.waitFor(c, 2);
            PessimisticLocks locks = PessimisticLocks.of(db.dataSource());

            Timeout t = timeout(
                    db,
                    db.dataSource(),
                    locks,
                    "a chain of three",
                    forUpdate(locks, s.table, 3, LockWait.atMost(BOUND)));

            assertWithinBound(t);
            if (throughPooler(db, t)) {
                return;
            }
            assertThat(t.ids()).as(t.blockers().toString()).containsExactly(c.id(), b.id(), a.id());
            assertThat(t.blocks()).containsExactly(t.waiter(), c.id(), b.id());
            assertDescribes(db, t.blockers().sessions().get(1), b, () -> "FOR UPDATE");
        }
    }

    /**
     * MariaDB gives every transaction that only reads or share-locks the same trx_id, 0: a plain read that runs
     * elsewhere at the time (here a long one on another table) is no blocker of a wait for share-lockers.
     */
    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void aPlainReadElsewhereIsNoBlockerOfShareLockers(TestDatabase db) throws Exception {
        String other = db.newTableName("reader");
        db.execute("CREATE TABLE " + other + " (id INT PRIMARY KEY) ENGINE=InnoDB");
        db.execute("INSERT INTO " + other + " VALUES (1)");
        try (BlockingSessions s = new BlockingSessions(db, 1);
                java.sql.Connection reader = db.connection()) {
            List<Session> holders = List.of(s.begin("a"), s.begin("b"));
            for (Session h : holders) {
                s.share(h, 1);
            }
            java.util.concurrent.CompletableFuture<Void> reading =
                    java.util.concurrent.CompletableFuture.runAsync(() -> {
                        try (java.sql.Statement st = reader.createStatement()) {
                            st.executeQuery("SELECT COUNT(*), SLEEP(30) FROM " + other)
                                    .close();
                        } catch (java.sql.SQLException e) {
                            // ended by the kill below
                        }
                    });
            org.awaitility.Awaitility.await("the reader in its statement")
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> dev.holdfast.LockViews.read(
                                    db,
                                    () -> db.queryLong(
                                            "SELECT COUNT(*) FROM"
                                                    + " information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p"
                                                    + " ON p.ID = t.trx_mysql_thread_id WHERE p.INFO LIKE ?",
                                            "SELECT COUNT(*), SLEEP(30) FROM %"))
                            == 1);
            long readerId = db.queryLong(
                    "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE ?",
                    "SELECT COUNT(*), SLEEP(30) FROM %");
            try {
                PessimisticLocks locks = PessimisticLocks.of(db.dataSource());
                Timeout t = timeout(
                        db,
                        db.dataSource(),
                        locks,
                        "two share-lockers and a reader elsewhere",
                        forUpdate(locks, s.table, 1, LockWait.atMost(BOUND)));
                assertWithinBound(t);
                assertThat(t.ids())
                        .as(t.blockers().toString())
                        .containsExactlyInAnyOrderElementsOf(
                                holders.stream().map(Session::id).toList());
            } finally {
                db.execute("KILL QUERY " + readerId);
                reading.get(30, java.util.concurrent.TimeUnit.SECONDS);
            }
        }
    }

    /**
     * Several transactions that share-lock the row all block the caller directly. MariaDB names
     * them all; PostgreSQL waits for them one at a time and names the one it waits for.
     */
    @DatabaseTest(only = {TestDatabase.Kind.POSTGRESQL, TestDatabase.Kind.MARIADB})
    void threeShareLockersBlockDirectly(TestDatabase db) throws Exception {
        try (BlockingSessions s = new BlockingSessions(db, 1)) {
            List<Session> holders = List.of(s.begin("a"), s.begin("b"), s.begin("c"));
            for (Session h : holders) {
                s.share(h, 1);
            }
            PessimisticLocks locks = PessimisticLocks.of(db.dataSource());

            Timeout t = timeout(
                    db,
                    db.dataSource(),
                    locks,
                    "three share-lockers",
                    forUpdate(locks, s.table, 1, LockWait.atMost(BOUND)));

            assertWithinBound(t);
            if (throughPooler(db, t)) {
                return;
            }
            List<String> ids = holders.stream().map(Session::id).toList();
            if (db.kind() == TestDatabase.Kind.MARIADB) {
                assertThat(t.ids()).as(t.blockers().toString()).containsExactlyInAnyOrderElementsOf(ids);
            } else {
                assertThat(t.ids()).as(t.blockers().toString()).hasSize(1).isSubsetOf(ids);
            }
            assertThat(t.blockers().direct()).hasSameSizeAs(t.blockers().sessions());
        }
    }

    @DatabaseTest
    void forUpdateAllNamesTheBlockersOfTheRowItWaitedFor(TestDatabase db) throws Exception {
        try (BlockingSessions s = new BlockingSessions(db, 3)) {
            Session a = s.begin("a");
            s.lock(a, 2);
            PessimisticLocks locks = PessimisticLocks.of(db.dataSource());

            Timeout t = timeout(
                    db,
                    db.dataSource(),
                    locks,
                    "forUpdateAll",
                    c -> locks.forUpdateAll(
                            c,
                            List.of(RowRef.of(s.table, 3L), RowRef.of(s.table, 1L), RowRef.of(s.table, 2L)),
                            LockWait.atMost(BOUND)));

            assertWithinBound(t);
            if (throughPooler(db, t)) {
                return;
            }
            assertThat(t.exception().row()).isEqualTo(RowRef.of(s.table, 2L));
            assertThat(t.ids()).as(t.blockers().toString()).containsExactly(a.id());
        }
    }

    @DatabaseTest
    void aRoleThatMayNotSeeOtherSessionsGetsBlockersUnknown(TestDatabase db) throws Exception {
        try (BlockingSessions s = new BlockingSessions(db, 1)) {
            Session a = s.begin("a");
            s.lock(a, 1);
            String role =
                    "hf_blind_" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 24, 36);
            String grantee = switch (db.kind()) {
                case POSTGRESQL -> role;
                case MARIADB -> "'" + role + "'@'%'";
                case H2 -> role.toUpperCase(java.util.Locale.ROOT);
            };
            db.execute(
                    switch (db.kind()) {
                        case POSTGRESQL -> "CREATE ROLE " + role + " LOGIN";
                        case MARIADB -> "CREATE USER " + grantee;
                        case H2 -> "CREATE USER " + grantee + " PASSWORD ''"; // no admin: sees no other session
                    });
            try {
                db.execute("GRANT SELECT, UPDATE ON " + s.table + " TO " + grantee);
                try (HikariDataSource blind =
                        db.newPoolAs(grantee.replace("'@'%'", "").replace("'", ""), 3)) {
                    PessimisticLocks locks = PessimisticLocks.of(blind);

                    Timeout t = timeout(
                            db,
                            blind,
                            locks,
                            "a role that may not see other sessions",
                            forUpdate(locks, s.table, 1, LockWait.atMost(BOUND)));

                    assertWithinBound(t);
                    assertThat(t.blockers().known()).as(t.blockers().toString()).isFalse();
                    assertThat(t.blockers().sessions()).isEmpty();
                    assertThat(t.blockers().unknownBecause())
                            .contains(
                                    switch (db.kind()) {
                                        case POSTGRESQL -> "role " + role + " may not see the sessions that block it";
                                        case MARIADB -> "PROCESS";
                                        case H2 ->
                                            "user " + grantee + " may not see sessions " + t.waiter()
                                                    + " (H2 shows other sessions to admins only)";
                                    });
                    assertThat(t.exception()).hasMessageContaining("blockers unknown");
                }
            } finally {
                db.execute("REVOKE ALL ON " + s.table + " FROM " + grantee);
                db.execute((db.kind() == TestDatabase.Kind.POSTGRESQL ? "DROP ROLE " : "DROP USER ") + grantee);
            }
        }
    }

    @DatabaseTest
    void noWaitAndLocksWithoutADataSourceSayWhyTheBlockersAreUnknown(TestDatabase db) throws Exception {
        try (BlockingSessions s = new BlockingSessions(db, 1)) {
            Session a = s.begin("a");
            s.lock(a, 1);
            PessimisticLocks withSource = PessimisticLocks.of(db.dataSource());
            PessimisticLocks withoutSource = PessimisticLocks.of(withSource.dialect());
            assertThat(withSource.namesBlockers()).isTrue();
            assertThat(withoutSource.namesBlockers()).isFalse();
            assertThat(withSource.withoutBlockers().namesBlockers()).isFalse();
            assertThat(withoutSource.blockersFrom(db.dataSource()).namesBlockers())
                    .isTrue();

            Timeout noWait = timeout(
                    db, db.dataSource(), withSource, "no wait", forUpdate(withSource, s.table, 1, LockWait.noWait()));
            assertThat(noWait.blockers().unknownBecause()).contains("does not wait");

            Timeout noSource = timeout(
                    db,
                    db.dataSource(),
                    withoutSource,
                    "no data source",
                    forUpdate(withoutSource, s.table, 1, LockWait.atMost(Duration.ofMillis(200))));
            assertThat(noSource.blockers().unknownBecause()).contains("no DataSource");
        }
    }

    /** The observation cannot get a connection: the timeout ends on time, its blockers unknown. */
    @DatabaseTest
    void anExhaustedPoolLeavesTheBlockersUnknownAndTheBoundHolds(TestDatabase db) throws Exception {
        try (BlockingSessions s = new BlockingSessions(db, 1)) {
            Session a = s.begin("a");
            s.lock(a, 1);
            HikariDataSource one = db.newPool(1);
            PessimisticLocks locks = PessimisticLocks.of(db.dataSource()).blockersFrom(one);

            Timeout t =
                    timeout(db, one, locks, "an exhausted pool", forUpdate(locks, s.table, 1, LockWait.atMost(BOUND)));

            assertWithinBound(t);
            assertThat(t.blockers().unknownBecause()).contains("took longer");
        }
    }
}
