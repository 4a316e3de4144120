package dev.holdfast.lease;

import dev.holdfast.DatabaseException;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * Coalesces concurrent acquires and releases of one {@link LeaseService} into one transaction, so
 * that they share one commit. A call that finds nothing in flight runs alone at once, exactly as
 * without batching (no added latency when the instance is idle); calls that arrive while a
 * statement is in flight queue, and the first of them to see it end runs every queued call (up to
 * {@link #MAX_BATCH}, one per name) in one transaction, in name order, so that two instances
 * batching overlapping names lock rows in the same order and cannot deadlock each other. Each call
 * runs its own statements and gets its own result; only the commit is shared.
 *
 * <p>Failure: if a statement of the batch fails (a lost race, a deadlock, a broken connection),
 * the transaction is rolled back, nothing of it took effect, and every call of the batch runs again
 * alone on its own thread, with the retries it has alone. If the commit itself fails, the outcome is unknown to the
 * client, as for a single call: every call of the batch raises {@link DatabaseException}.
 */
final class LeaseBatcher {

    /** Most calls in one transaction: bounds how long its row locks are held. */
    static final int MAX_BATCH = 32;

    private final DataSource dataSource;
    private final ReentrantLock inFlight = new ReentrantLock();
    private final Object ended = new Object();
    private final ConcurrentLinkedQueue<Pending<?>> queue = new ConcurrentLinkedQueue<>();
    private final java.util.concurrent.atomic.LongAdder committedInBatches = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder batches = new java.util.concurrent.atomic.LongAdder();

    LeaseBatcher(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /** One queued call: its name, its statements, and its outcome once the batch ends. */
    private static final class Pending<T> {
        final String name;
        final Supplier<T> alone;
        final LeaseService.SqlCall<T> inBatch;
        T result;
        RuntimeException failure;
        boolean again;
        volatile boolean done;

        Pending(String name, Supplier<T> alone, LeaseService.SqlCall<T> inBatch) {
            this.name = name;
            this.alone = alone;
            this.inBatch = inBatch;
        }

        /** Runs the call alone on this thread (a batch of one), keeping its outcome for its caller. */
        void runAlone() {
            try {
                result = alone.get();
            } catch (RuntimeException e) {
                failure = e;
            }
            done = true;
        }
    }

    /**
     * Runs a call of lease {@code name}: {@code alone} (which borrows its own auto-commit connection)
     * if nothing is in flight or its batch failed before its commit, else {@code inBatch} on the
     * batch's connection.
     */
    <T> T run(String name, Supplier<T> alone, LeaseService.SqlCall<T> inBatch) {
        if (inFlight.tryLock()) {
            try {
                return alone.get();
            } finally {
                end();
            }
        }
        Pending<T> mine = new Pending<>(name, alone, inBatch);
        queue.add(mine);
        boolean interrupted = false;
        while (!mine.done) {
            if (inFlight.tryLock()) {
                try {
                    if (!mine.done) {
                        runBatch();
                    }
                } finally {
                    end();
                }
            } else {
                synchronized (ended) {
                    while (!mine.done && inFlight.isLocked()) {
                        try {
                            ended.wait();
                        } catch (InterruptedException e) {
                            interrupted = true; // the call may be in the batch: wait for its outcome
                        }
                    }
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (mine.again) {
            return alone.get(); // its batch failed before committing: nothing of it took effect
        }
        if (mine.failure != null) {
            throw mine.failure;
        }
        return mine.result;
    }

    /** Tests and benchmarks: calls committed in batches of two or more, and how many such batches. */
    long[] committed() {
        return new long[] {committedInBatches.sum(), batches.sum()};
    }

    /** Tests: whether a call or batch is in flight. */
    boolean busy() {
        return inFlight.isLocked();
    }

    /** Tests: calls waiting for a batch. */
    int queued() {
        return queue.size();
    }

    private void end() {
        inFlight.unlock();
        synchronized (ended) {
            ended.notifyAll();
        }
    }

    /** Takes up to {@link #MAX_BATCH} queued calls of distinct names and runs them in one transaction. */
    private void runBatch() {
        List<Pending<?>> batch = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (Iterator<Pending<?>> it = queue.iterator(); it.hasNext() && batch.size() < MAX_BATCH; ) {
            Pending<?> p = it.next();
            if (names.add(p.name)) {
                batch.add(p);
                it.remove();
            }
        }
        if (batch.isEmpty()) {
            return;
        }
        if (batch.size() == 1) {
            batch.get(0).runAlone(); // auto-commit, as without batching (a fast release stays fast)
            return;
        }
        batch.sort(Comparator.comparing(p -> p.name));
        try (Connection c = dataSource.getConnection()) {
            boolean autoCommit = c.getAutoCommit();
            c.setAutoCommit(false);
            try {
                try {
                    for (Pending<?> p : batch) {
                        execute(p, c);
                    }
                } catch (SQLException | RuntimeException e) {
                    rollbackQuietly(c, e);
                    finish(batch, true, null);
                    return;
                }
                try {
                    c.commit();
                } catch (SQLException e) {
                    // Unknown outcome, reported as such; restoring auto-commit must not commit it after all.
                    rollbackQuietly(c, e);
                    finish(batch, false, new DatabaseException("committing " + batch.size() + " lease calls", e));
                    return;
                }
                batches.increment();
                committedInBatches.add(batch.size());
                finish(batch, false, null);
            } finally {
                if (autoCommit && !c.isClosed()) {
                    c.setAutoCommit(true);
                }
            }
        } catch (SQLException e) {
            // The connection could not be borrowed or restored: whatever did not commit runs alone.
            finish(batch.stream().filter(p -> !p.done).toList(), true, null);
        }
    }

    private static <T> void execute(Pending<T> p, Connection c) throws SQLException {
        p.result = p.inBatch.run(c);
    }

    private static void finish(List<Pending<?>> batch, boolean again, RuntimeException failure) {
        for (Pending<?> p : batch) {
            p.again = again;
            p.failure = failure;
            p.done = true;
        }
    }

    private static void rollbackQuietly(Connection c, Exception cause) {
        try {
            c.rollback();
        } catch (SQLException e) {
            cause.addSuppressed(e); // the pool discards a connection it cannot roll back
        }
    }
}
