package dev.holdfast.benchmarks;

import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.lease.internal.LeaseBatches;
import dev.holdfast.lease.internal.LeaseRow;
import dev.holdfast.lease.internal.LeaseStore;
import dev.holdfast.lease.internal.LeaseStores;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Phaser;
import javax.sql.DataSource;

/**
 * The ceiling of batches in lockstep on a machine: the service's own two batch statements (acquire
 * all, release all, fast) driven by nothing but a {@link Phaser}, with every registered thread in each
 * batch and no linger, queue, timer, cohort hand-off, validation or bookkeeping. The last thread to
 * arrive runs the statement for everyone (as a batch leader does); the others wake when it commits.
 * What this reaches is what any lockstep batching of these statements can reach with that many
 * calling threads on this machine; it is a measuring stick, not a lease service (it checks nothing
 * a service must).
 *
 * <p>All threads of a block are registered before they start ({@link #startBlock}), so they stay in
 * step: every phase is all acquires or all releases ({@link Cycle#TWO_STATEMENTS}), or, with the odd threads a
 * phase behind, one half's acquires and the other half's releases in one commit ({@link Cycle#ONE_COMMIT},
 * {@link Cycle#ONE_STATEMENT}). A thread that stops {@linkplain #finish leaves}.
 */
public final class BareLockstep {
    private final DataSource dataSource;
    private final LeaseStore jdbc;
    private final long ttlMicros;
    private final Cycle cycle;
    private final String combinedSql;
    private volatile Block block;

    /** How a bare lockstep commits a phase. */
    public enum Cycle {
        /** All threads in step: a phase is all acquires (one statement) or all releases (one statement, fast). */
        TWO_STATEMENTS,
        /**
         * Odd threads one phase behind even ones: a phase holds the acquires of one half and the releases
         * of the other, sent as the two batch statements in one transaction, one commit.
         */
        ONE_COMMIT,
        /** As {@link #ONE_COMMIT}, the two batch statements joined into one (PostgreSQL: data-modifying CTEs). */
        ONE_STATEMENT
    }

    public BareLockstep(DataSource dataSource, Dialect dialect, String table, long ttlMicros) {
        this(dataSource, dialect, table, ttlMicros, Cycle.TWO_STATEMENTS);
    }

    public BareLockstep(DataSource dataSource, Dialect dialect, String table, long ttlMicros, Cycle cycle) {
        this.dataSource = dataSource;
        this.jdbc = LeaseStores.forDialect(dialect, table);
        this.ttlMicros = ttlMicros;
        this.cycle = cycle;
        if (cycle == Cycle.ONE_STATEMENT && dialect != Dialect.POSTGRESQL) {
            throw new IllegalArgumentException("one statement per cycle is written for PostgreSQL only");
        }
        this.combinedSql = cycle == Cycle.ONE_STATEMENT ? combinedSql(dialect, table) : null;
    }

    /**
     * The PostgreSQL release-all and acquire-all joined: the release's CTEs and update, the acquire's
     * CTE and insert, each as a CTE, one commit (durable: the acquire sets it). Names of the two halves
     * are distinct, so no row is changed twice. Binds the release's three arrays, then the acquire's.
     */
    private static String combinedSql(Dialect dialect, String table) {
        var batches = (dev.holdfast.lease.internal.BatchLeaseSql)
                LeaseStores.forDialect(dialect, table).sql();
        String release = batches.releaseAllSql(1, false);
        String acquire = batches.acquireAllSql(1);
        int u = release.indexOf(") UPDATE ");
        int i = acquire.indexOf(") INSERT INTO ");
        if (!release.startsWith("WITH ") || !acquire.startsWith("WITH ") || u < 0 || i < 0) {
            throw new IllegalStateException("unexpected batch statements: " + release + " / " + acquire);
        }
        return "WITH " + release.substring(5, u + 1) + ", rel AS (" + release.substring(u + 2) + "), "
                + acquire.substring(5, i + 1) + ", acq AS (" + acquire.substring(i + 2) + ")"
                + " SELECT acq.name, acq.token FROM acq UNION ALL SELECT rel.name, NULL FROM rel";
    }

    /** Starts a block of {@code threads} threads, numbered 0 to threads - 1. */
    public void startBlock(int threads) {
        block = new Block(threads);
    }

    /** Acquires and releases {@code name} for {@code owner} on thread {@code t}, in step with the others. */
    public void pair(int t, String name, String owner) throws SQLException {
        Block b = block;
        if (cycle != Cycle.TWO_STATEMENTS && (t & 1) == 1 && !b.offset[t]) {
            b.offset[t] = true;
            b.phaser.arriveAndAwaitAdvance(); // odd threads run one phase behind
            b.check();
        }
        b.requests[t] = new LeaseStore.Acquire(name, owner, ttlMicros);
        b.phaser.arriveAndAwaitAdvance();
        LeaseRow lease = (LeaseRow) b.results[t];
        b.check();
        if (lease == null) {
            throw new IllegalStateException("not granted: " + name);
        }
        b.requests[t] = new LeaseStore.Release(name, owner, lease.token());
        b.phaser.arriveAndAwaitAdvance();
        Object released = b.results[t];
        b.check();
        if (!Boolean.TRUE.equals(released)) {
            throw new IllegalStateException("not released: " + name);
        }
    }

    /** Thread {@code t} stops: the others go on without it. */
    public void finish(int t) {
        block.phaser.arriveAndDeregister();
    }

    private final class Block {
        final Object[] requests;
        final Object[] results;
        final boolean[] offset;
        volatile SQLException failure;
        final Phaser phaser;

        Block(int threads) {
            requests = new Object[threads];
            results = new Object[threads];
            offset = new boolean[threads];
            phaser = new Phaser(threads) {
                @Override
                protected boolean onAdvance(int phase, int registeredParties) {
                    try {
                        runBatch();
                    } catch (SQLException e) {
                        failure = e;
                    }
                    return registeredParties == 0;
                }
            };
        }

        void check() throws SQLException {
            if (failure != null) {
                throw failure;
            }
        }

        private static String name(Object request) {
            return request instanceof LeaseStore.Acquire a ? a.name() : ((LeaseStore.Release) request).name();
        }

        /** Runs the phase's requests (all of one kind: threads are in step) in one statement, in the service's order of names. */
        void runBatch() throws SQLException {
            List<Integer> threads = new ArrayList<>();
            for (int t = 0; t < requests.length; t++) {
                if (requests[t] != null) {
                    threads.add(t);
                }
            }
            if (threads.isEmpty()) {
                return;
            }
            threads.sort(Comparator.comparing(t -> name(requests[t]), LeaseBatches.CODE_POINT_ORDER));
            List<Integer> acquiring = threads.stream()
                    .filter(t -> requests[t] instanceof LeaseStore.Acquire)
                    .toList();
            if (cycle != Cycle.TWO_STATEMENTS && !acquiring.isEmpty() && acquiring.size() < threads.size()) {
                try {
                    runCombined(
                            acquiring,
                            threads.stream().filter(t -> !acquiring.contains(t)).toList());
                } finally {
                    threads.forEach(t -> requests[t] = null);
                }
                return;
            }
            try (Connection c = dataSource.getConnection()) {
                if (requests[threads.get(0)] instanceof LeaseStore.Acquire) {
                    List<LeaseStore.Acquire> batch = threads.stream()
                            .map(t -> (LeaseStore.Acquire) requests[t])
                            .toList();
                    Map<String, LeaseRow> granted = jdbc.acquireAll(c, batch);
                    for (int t : threads) {
                        results[t] = granted.get(name(requests[t]));
                    }
                } else {
                    List<LeaseStore.Release> batch = threads.stream()
                            .map(t -> (LeaseStore.Release) requests[t])
                            .toList();
                    Map<String, Boolean> released = jdbc.releaseAll(c, batch, true);
                    for (int t : threads) {
                        results[t] = released.containsKey(name(requests[t]));
                    }
                }
            } finally {
                threads.forEach(t -> requests[t] = null);
            }
        }

        /** One phase's acquires and releases in one commit: one transaction of two statements, or one statement. */
        private void runCombined(List<Integer> acquiring, List<Integer> releasing) throws SQLException {
            List<LeaseStore.Acquire> acquires = acquiring.stream()
                    .map(t -> (LeaseStore.Acquire) requests[t])
                    .toList();
            List<LeaseStore.Release> releases = releasing.stream()
                    .map(t -> (LeaseStore.Release) requests[t])
                    .toList();
            Map<String, LeaseRow> granted;
            Map<String, Boolean> released;
            try (Connection c = dataSource.getConnection()) {
                if (cycle == Cycle.ONE_STATEMENT) {
                    granted = new java.util.HashMap<>();
                    released = new java.util.HashMap<>();
                    try (var ps = c.prepareStatement(combinedSql)) {
                        ps.setArray(
                                1,
                                c.createArrayOf(
                                        "varchar",
                                        releases.stream()
                                                .map(LeaseStore.Release::name)
                                                .toArray()));
                        ps.setArray(
                                2,
                                c.createArrayOf(
                                        "varchar",
                                        releases.stream()
                                                .map(LeaseStore.Release::owner)
                                                .toArray()));
                        ps.setArray(
                                3,
                                c.createArrayOf(
                                        "bigint",
                                        releases.stream()
                                                .map(LeaseStore.Release::token)
                                                .toArray()));
                        ps.setArray(
                                4,
                                c.createArrayOf(
                                        "varchar",
                                        acquires.stream()
                                                .map(LeaseStore.Acquire::name)
                                                .toArray()));
                        ps.setArray(
                                5,
                                c.createArrayOf(
                                        "varchar",
                                        acquires.stream()
                                                .map(LeaseStore.Acquire::owner)
                                                .toArray()));
                        ps.setArray(
                                6,
                                c.createArrayOf(
                                        "bigint",
                                        acquires.stream()
                                                .map(LeaseStore.Acquire::ttlMicros)
                                                .toArray()));
                        try (var rs = ps.executeQuery()) {
                            while (rs.next()) {
                                long token = rs.getLong(2);
                                if (rs.wasNull()) {
                                    released.put(rs.getString(1), true);
                                } else {
                                    granted.put(
                                            rs.getString(1), new LeaseRow(rs.getString(1), null, token, null, null));
                                }
                            }
                        }
                    }
                } else {
                    c.setAutoCommit(false);
                    try {
                        released = jdbc.releaseAll(c, releases, true);
                        granted = jdbc.acquireAll(c, acquires);
                        c.commit();
                    } catch (SQLException e) {
                        c.rollback();
                        throw e;
                    } finally {
                        c.setAutoCommit(true);
                    }
                }
            }
            for (int t : acquiring) {
                results[t] = granted.get(name(requests[t]));
            }
            for (int t : releasing) {
                results[t] = released.containsKey(name(requests[t]));
            }
        }
    }
}
