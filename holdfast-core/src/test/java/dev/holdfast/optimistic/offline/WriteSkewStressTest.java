package dev.holdfast.optimistic.offline;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.optimistic.Assignments;
import dev.holdfast.optimistic.VersionConflictException;
import dev.holdfast.optimistic.VersionedTable;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static dev.holdfast.optimistic.VersionedRows.create;
import static dev.holdfast.optimistic.VersionedRows.dialect;
import static dev.holdfast.optimistic.VersionedRows.insert;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Write skew, the case read-set checks exist for ("at least one doctor stays on call"): rows X and Y
 * are both 1. In each round two business transactions each read both rows, wait until the other
 * has read too, and then, since X + Y ≥ 2, each sets only its own row to 0 while only reading the
 * other. Checking written rows alone would commit both (different rows, both versions current) and
 * leave X + Y = 0. With the read-set check exactly one commits per round, and the database (the
 * independent checker) shows X + Y = 1 after every round.
 */
class WriteSkewStressTest {

    private static final byte[] KEY = "write-skew-stress-key-of-32-bytes-or-more".getBytes(StandardCharsets.UTF_8);
    private static final int ROUNDS = 100;

    @DatabaseTest
    void readSetChecksPreventWriteSkew(TestDatabase db) throws Exception {
        String table = create(db, "skew");
        insert(db, table, 1, "X", 1);
        insert(db, table, 2, "Y", 1);
        VersionedTable rows = VersionedTable.builder(table)
                .entity("doctor")
                .dialect(dialect(db))
                .build();
        OptimisticOfflineLock offline =
                OptimisticOfflineLock.builder(KEY).table(rows).build();
        HikariDataSource pool = db.newPool(4);
        CyclicBarrier bothRead = new CyclicBarrier(2);
        ExecutorService executor = Executors.newFixedThreadPool(2);
        int commits = 0;
        int conflicts = 0;
        try {
            for (int round = 0; round < ROUNDS; round++) {
                db.execute("UPDATE " + table + " SET counter = 1");
                List<Future<Boolean>> outcomes = new ArrayList<>();
                for (long own : new long[] {1, 2}) {
                    outcomes.add(executor.submit(() -> goOffCall(pool, table, rows, offline, own, bothRead)));
                }
                for (Future<Boolean> outcome : outcomes) {
                    if (outcome.get(1, TimeUnit.MINUTES)) {
                        commits++;
                    } else {
                        conflicts++;
                    }
                }
                assertThat(db.queryLong("SELECT SUM(counter) FROM " + table))
                        .as("round " + round)
                        .isEqualTo(1);
            }
        } finally {
            executor.shutdownNow();
        }
        System.out.printf("[%s] write-skew rounds=%d commits=%d refused=%d%n", db.id(), ROUNDS, commits, conflicts);
        assertThat(commits).isEqualTo(ROUNDS);
        assertThat(conflicts).isEqualTo(ROUNDS);
    }

    private static boolean goOffCall(
            HikariDataSource pool,
            String table,
            VersionedTable rows,
            OptimisticOfflineLock offline,
            long own,
            CyclicBarrier bothRead)
            throws Exception {
        BusinessTransaction tx = offline.begin();
        long sum = 0;
        try (Connection c = pool.getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT counter, version FROM " + table + " WHERE id = ?")) {
            for (long id = 1; id <= 2; id++) {
                ps.setLong(1, id);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    sum += rs.getLong(1);
                    tx.recordRead(rows, id, rs.getLong(2));
                }
            }
        }
        bothRead.await(1, TimeUnit.MINUTES);
        assertThat(sum).isEqualTo(2);
        BusinessTransaction commit = offline.open(offline.seal(tx));
        commit.write(rows, own, Assignments.of("counter", 0));
        try {
            offline.commit(pool, commit, "doctor-" + own);
            return true;
        } catch (VersionConflictException e) {
            assertThat(e.staleRows()).hasSize(1);
            assertThat(e.id()).isEqualTo(own == 1 ? 2L : 1L);
            return false;
        }
    }
}
