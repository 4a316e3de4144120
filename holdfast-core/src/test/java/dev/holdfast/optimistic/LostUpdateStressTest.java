package dev.holdfast.optimistic;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

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
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import static dev.holdfast.optimistic.VersionedRows.create;
import static dev.holdfast.optimistic.VersionedRows.dialect;
import static dev.holdfast.optimistic.VersionedRows.insert;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Lost-update stress: 16 threads, each on its own connection, increment one counter 500 times by
 * read (value, version) → versioned update → retry on {@link VersionConflictException}. The
 * database is the independent checker: the final counter must be exactly 8,000, and the version
 * must have moved exactly once per increment.
 */
class LostUpdateStressTest {

    static final int THREADS = 16;
    static final int INCREMENTS = 500;

    @DatabaseTest
    void sixteenThreadsTimesFiveHundredIncrementsLoseNothing(TestDatabase db) throws Exception {
        String table = create(db, "stress");
        insert(db, table, 1, "counter", 1);
        VersionedTable counters = VersionedTable.builder(table)
                .entity("counter")
                .dialect(dialect(db))
                .build();
        HikariDataSource pool = db.newPool(THREADS);
        AtomicLong conflicts = new AtomicLong();
        CyclicBarrier start = new CyclicBarrier(THREADS);
        AtomicLong made = new AtomicLong();
        ExecutorService threads =
                Executors.newFixedThreadPool(THREADS, r -> new Thread(r, "lost-update-" + made.incrementAndGet()));
        // Every connection is open before any worker waits for the others: a worker that could not get one used to
        // leave the other fifteen at the barrier for good, and the test reported a hang without its cause.
        List<Connection> connections = new ArrayList<>();
        try {
            for (int t = 0; t < THREADS; t++) {
                connections.add(pool.getConnection());
            }
            List<Future<Integer>> done = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                String me = "thread-" + t;
                Connection c = connections.get(t);
                done.add(threads.submit(() -> {
                    int mine = 0;
                    try (PreparedStatement read =
                            c.prepareStatement("SELECT counter, version FROM " + table + " WHERE id = 1")) {
                        start.await(1, TimeUnit.MINUTES);
                        while (mine < INCREMENTS) {
                            long value;
                            long version;
                            try (ResultSet rs = read.executeQuery()) {
                                rs.next();
                                value = rs.getLong(1);
                                version = rs.getLong(2);
                            }
                            try {
                                counters.update(c, 1L, version, me, Assignments.of("counter", value + 1));
                                mine++;
                            } catch (VersionConflictException stale) {
                                conflicts.incrementAndGet();
                            }
                        }
                    } catch (Throwable e) {
                        start.reset(); // the others stop waiting for this one (BrokenBarrierException)
                        throw e;
                    }
                    return mine;
                }));
            }
            int total = 0;
            List<Throwable> failures = new ArrayList<>();
            for (Future<Integer> f : done) {
                try {
                    total += f.get(5, TimeUnit.MINUTES);
                } catch (java.util.concurrent.ExecutionException e) {
                    failures.add(e.getCause());
                } catch (TimeoutException e) {
                    // Seen once on H2 (2.5.252, 2 forks beside): say where the workers were.
                    throw new AssertionError(
                            "a worker did not finish in 5 minutes; the workers:\n" + workerStacks(), e);
                }
            }
            // The first failure that is not another worker's broken barrier is the cause.
            Throwable cause = failures.stream()
                    .filter(e -> !(e instanceof java.util.concurrent.BrokenBarrierException))
                    .findFirst()
                    .orElse(failures.isEmpty() ? null : failures.get(0));
            if (cause != null) {
                throw new AssertionError(failures.size() + " of " + THREADS + " workers failed", cause);
            }
            assertThat(total).isEqualTo(THREADS * INCREMENTS);
        } finally {
            threads.shutdownNow();
            for (Connection c : connections) {
                c.close();
            }
        }
        long counter = db.queryLong("SELECT counter FROM " + table + " WHERE id = 1");
        long version = db.queryLong("SELECT version FROM " + table + " WHERE id = 1");
        System.out.printf(
                "[%s] JDBC lost-update stress: counter=%d version=%d conflicts retried=%d%n",
                db.id(), counter, version, conflicts.get());
        assertThat(counter).isEqualTo(8_000);
        assertThat(version).isEqualTo(1 + 8_000);
    }

    private static String workerStacks() {
        StringBuilder out = new StringBuilder();
        Thread.getAllStackTraces().forEach((thread, stack) -> {
            if (thread.getName().startsWith("lost-update-")) {
                out.append(thread.getName())
                        .append(' ')
                        .append(thread.getState())
                        .append('\n');
                for (StackTraceElement frame : stack) {
                    out.append("\tat ").append(frame).append('\n');
                }
            }
        });
        return out.toString();
    }
}
