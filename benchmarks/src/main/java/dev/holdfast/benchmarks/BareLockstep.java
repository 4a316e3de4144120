package dev.holdfast.benchmarks;

import dev.holdfast.lease.internal.LeaseJdbc;
import dev.holdfast.lease.internal.LeaseSqls;
import dev.holdfast.lease.internal.LeaseBatches;
import dev.holdfast.lease.internal.LeaseRow;
import dev.holdfast.jdbc.dialect.Dialect;

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
 * step: every phase is all acquires or all releases. A thread that stops {@linkplain #finish leaves}.
 */
public final class BareLockstep {
    private final DataSource dataSource;
    private final LeaseJdbc jdbc;
    private final long ttlMicros;
    private volatile Block block;

    public BareLockstep(DataSource dataSource, Dialect dialect, String table, long ttlMicros) {
        this.dataSource = dataSource;
        this.jdbc = new LeaseJdbc(LeaseSqls.forDialect(dialect, table));
        this.ttlMicros = ttlMicros;
    }

    /** Starts a block of {@code threads} threads, numbered 0 to threads - 1. */
    public void startBlock(int threads) {
        block = new Block(threads);
    }

    /** Acquires and releases {@code name} for {@code owner} on thread {@code t}, in step with the others. */
    public void pair(int t, String name, String owner) throws SQLException {
        Block b = block;
        b.requests[t] = new LeaseJdbc.Acquire(name, owner, ttlMicros);
        b.phaser.arriveAndAwaitAdvance();
        LeaseRow lease = (LeaseRow) b.results[t];
        b.check();
        if (lease == null) {
            throw new IllegalStateException("not granted: " + name);
        }
        b.requests[t] = new LeaseJdbc.Release(name, owner, lease.token());
        b.phaser.arriveAndAwaitAdvance();
        Object released = b.results[t];
        b.check();
        if (!Boolean.TRUE.equals(released)) {
            throw new IllegalStateException("not released: " + name);
        }
    }

    /**
     * The service's own batcher in lockstep ({@link LeaseBatches}, one statement in flight, {@code
     * lingerNanos}) with nothing of the service around it: no validation, cohort hand-offs or wake-ups.
     * Against {@link #pair} it shows what the batcher's coordination costs; against the service, what
     * the rest does.
     */
    public static Pair batchesAlone(DataSource dataSource, Dialect dialect, String table, long ttlMicros, long lingerNanos) {
        LeaseBatches batches = LeaseBatches.lockstepAlone(dataSource, dialect, table, lingerNanos);
        return (name, owner) -> {
            LeaseRow lease = batches.acquire(name, owner, ttlMicros).orElseThrow(() -> new IllegalStateException("not granted: " + name));
            if (!batches.release(name, owner, lease.token())) {
                throw new IllegalStateException("not released: " + name);
            }
        };
    }

    /** An acquire and release. */
    @FunctionalInterface
    public interface Pair {
        void run(String name, String owner);
    }

    /** Thread {@code t} stops: the others go on without it. */
    public void finish(int t) {
        block.phaser.arriveAndDeregister();
    }

    private final class Block {
        final Object[] requests;
        final Object[] results;
        volatile SQLException failure;
        final Phaser phaser;

        Block(int threads) {
            requests = new Object[threads];
            results = new Object[threads];
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
            return request instanceof LeaseJdbc.Acquire a ? a.name() : ((LeaseJdbc.Release) request).name();
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
            try (Connection c = dataSource.getConnection()) {
                if (requests[threads.get(0)] instanceof LeaseJdbc.Acquire) {
                    List<LeaseJdbc.Acquire> batch = threads.stream().map(t -> (LeaseJdbc.Acquire) requests[t]).toList();
                    Map<String, LeaseRow> granted = jdbc.acquireAll(c, batch);
                    for (int t : threads) {
                        results[t] = granted.get(name(requests[t]));
                    }
                } else {
                    List<LeaseJdbc.Release> batch = threads.stream().map(t -> (LeaseJdbc.Release) requests[t]).toList();
                    Map<String, Boolean> released = jdbc.releaseAll(c, batch, true);
                    for (int t : threads) {
                        results[t] = released.containsKey(name(requests[t]));
                    }
                }
            } finally {
                threads.forEach(t -> requests[t] = null);
            }
        }
    }
}
