package dev.holdfast.lease.internal;

import dev.holdfast.internal.Invariants;
import org.jspecify.annotations.Nullable;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * Coalesces concurrent calls of one kind into batches, one statement each. A call that finds no
 * batch running runs at once, alone or with the calls queued before it; calls that arrive while
 * batches run queue and go together in the next one. Another batch may start while some run (at
 * most {@code maxInFlight} at once) only when {@code overlapAt} calls are queued, so that batches
 * stay large yet the database's own work overlaps. So an idle service sends each call alone, with
 * no added wait, and a busy one sends one statement for many calls (at most {@code maxSize}, one per
 * key; a call whose key is in a running batch waits for it, so that one stuck key cannot hold every
 * statement). The thread whose call starts a batch runs it; the others in it wait for their outcome.
 * A batch is sorted by key, so that two batches lock rows in the same order and cannot deadlock
 * each other. Each batcher has a lock of its own: a release never waits for an acquire's statement.
 *
 * @param <Q> a call
 * @param <R> its result
 */
public final class Batcher<Q, R> {

    /** Runs one batch: the outcome of each call, in the batch's order. Failures are outcomes. */
    @FunctionalInterface
    public interface Runner<Q, R> {
        List<Outcome<R>> run(List<Q> batch);
    }

    /** The result of one call, or how it failed. */
    public record Outcome<R>(@Nullable R value, @Nullable RuntimeException failure) {

        public static <R> Outcome<R> of(R value) {
            return new Outcome<>(value, null);
        }

        public static <R> Outcome<R> failed(RuntimeException failure) {
            return new Outcome<>(null, failure);
        }

        R get() {
            if (failure != null) {
                throw failure;
            }
            return Invariants.nonNull(value, "an outcome without a failure has a value");
        }
    }

    /**
     * One call. Its thread parks without the lock, woken only when it has an outcome or may start a
     * batch: a settled call returns without taking the lock again, so that the calls of a batch wake
     * at once rather than one after another as each gets the lock.
     */
    private static final class Call<Q, R> {
        final Q request;
        final Thread thread = Thread.currentThread();
        boolean queued = true;

        @Nullable
        Outcome<R> outcome;

        @Nullable
        Error error;
        /** Written after {@code outcome} or {@code error}, so that a thread that reads it true sees them. */
        volatile boolean settled;
        /** Told it may start a batch; cleared under the lock before it parks. */
        volatile boolean woken;

        Call(Q request) {
            this.request = request;
        }

        void wake() {
            woken = true;
            LockSupport.unpark(thread);
        }
    }

    private final ReentrantLock lock = new ReentrantLock();
    private final ArrayDeque<Call<Q, R>> queue = new ArrayDeque<>();
    /** The keys of the calls in running batches: a call of such a key waits for its batch to end. */
    private final Set<String> keysInFlight = new HashSet<>();
    /** Batches running now. */
    private int inFlight;

    private final Function<Q, String> key;
    private final Comparator<String> order;
    private final Runner<Q, R> runner;
    private final int maxInFlight;
    /** With a batch in flight, another may start only once this many calls are queued. */
    private final int overlapAt;

    private final int maxSize;

    /**
     * @param key   what no two calls of one batch, or of two running batches, share (a lease name)
     * @param order the order of a batch (the database's order of its keys, so that batches lock alike)
     */
    public Batcher(
            Function<Q, String> key,
            Comparator<String> order,
            int maxInFlight,
            int overlapAt,
            int maxSize,
            Runner<Q, R> runner) {
        if (maxInFlight < 1 || maxSize < 1 || overlapAt < 1) {
            throw new IllegalArgumentException("maxInFlight, overlapAt and maxSize must be at least 1");
        }
        this.key = key;
        this.order = order;
        this.maxInFlight = maxInFlight;
        this.overlapAt = overlapAt;
        this.maxSize = maxSize;
        this.runner = runner;
    }

    /**
     * Runs {@code request} in a batch and returns its result, or throws its failure. Not
     * interruptible (the call may already be in a statement); an interrupt stays set.
     */
    public R submit(Q request) {
        boolean interrupted = false;
        boolean locked = true;
        lock.lock();
        try {
            Call<Q, R> call = new Call<>(request);
            queue.addLast(call);
            while (!call.settled) {
                if (call.queued && mayStart(call)) {
                    run(take(call));
                    wakeNext();
                    continue;
                }
                call.woken = false;
                lock.unlock();
                locked = false;
                while (!call.settled && !call.woken) {
                    LockSupport.park(this);
                    if (Thread.interrupted()) {
                        interrupted = true; // kept aside, else every later park would end at once
                    }
                }
                if (call.settled) {
                    break; // its outcome is all it needs: no lock, so the calls of a batch leave at once
                }
                lock.lock();
                locked = true;
            }
            if (call.error != null) {
                throw call.error;
            }
            return Invariants.nonNull(call.outcome, "a settled call has an outcome or an error")
                    .get();
        } finally {
            if (locked) {
                lock.unlock();
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Calls queued for a batch, not yet in one. */
    public int queued() {
        lock.lock();
        try {
            return queue.size();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes {@code first} and the calls queued before others, one per key and none of a key in
     * flight, in {@code order}; marks them taken only once the batch is complete. Holds the lock.
     */
    private List<Call<Q, R>> take(Call<Q, R> first) {
        List<Call<Q, R>> batch = new ArrayList<>();
        Set<String> keys = new HashSet<>();
        batch.add(first);
        keys.add(key.apply(first.request));
        for (Call<Q, R> next : queue) {
            if (batch.size() >= maxSize) {
                break;
            }
            String k = key.apply(next.request);
            if (!keysInFlight.contains(k) && keys.add(k)) {
                batch.add(next);
            }
        }
        batch.sort(Comparator.comparing(c -> key.apply(c.request), order));
        queue.removeAll(batch);
        batch.forEach(c -> c.queued = false);
        keysInFlight.addAll(keys);
        inFlight++;
        wakeNext();
        return batch;
    }

    /**
     * Runs {@code batch} with the lock released, on a thread whose interrupt would fail every call
     * of the batch (a pool refuses a connection to an interrupted thread): it is kept aside and
     * restored after. Settles every call of the batch on every path, under the lock.
     */
    private void run(List<Call<Q, R>> batch) {
        List<Outcome<R>> outcomes = null;
        Throwable thrown = null;
        lock.unlock();
        boolean interrupted = Thread.interrupted();
        try {
            outcomes = runner.run(batch.stream().map(c -> c.request).toList());
            if (outcomes == null
                    || outcomes.size() != batch.size()
                    || outcomes.stream().anyMatch(Objects::isNull)) {
                throw new IllegalStateException("no outcome for every call of a batch of " + batch.size());
            }
        } catch (Throwable e) {
            thrown = e;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            lock.lock();
            inFlight--;
            for (int i = 0; i < batch.size(); i++) {
                Call<Q, R> c = batch.get(i);
                keysInFlight.remove(key.apply(c.request));
                if (thrown instanceof Error e) {
                    c.error = e;
                } else if (thrown instanceof RuntimeException e) {
                    c.outcome = Outcome.failed(e);
                } else if (thrown != null) {
                    c.outcome = Outcome.failed(new IllegalStateException("batch failed", thrown));
                } else {
                    c.outcome = Invariants.nonNull(outcomes, "set and checked when nothing was thrown")
                            .get(i);
                }
                c.settled = true;
                c.wake();
            }
        }
    }

    /** Whether queued {@code call} may start a batch now. Holds the lock. */
    private boolean mayStart(Call<Q, R> call) {
        boolean free = inFlight == 0 || inFlight < maxInFlight && queue.size() >= overlapAt;
        return free && !keysInFlight.contains(key.apply(call.request));
    }

    /** Wakes the first queued call that may start a batch now, if any (each call waits on its own condition). Holds the lock. */
    private void wakeNext() {
        for (Call<Q, R> c : queue) {
            if (mayStart(c)) {
                c.wake();
                return;
            }
        }
    }
}
