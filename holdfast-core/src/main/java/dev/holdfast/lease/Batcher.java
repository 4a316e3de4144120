package dev.holdfast.lease;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.locks.Condition;
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
 * each other.
 *
 * @param <Q> a call
 * @param <R> its result
 */
final class Batcher<Q, R> {

    /** Runs one batch: the outcome of each call, in the batch's order. Failures are outcomes. */
    @FunctionalInterface
    interface Runner<Q, R> {
        List<Outcome<R>> run(List<Q> batch);
    }

    /** The result of one call, or how it failed. */
    record Outcome<R>(R value, RuntimeException failure) {

        static <R> Outcome<R> of(R value) {
            return new Outcome<>(value, null);
        }

        static <R> Outcome<R> failed(RuntimeException failure) {
            return new Outcome<>(null, failure);
        }

        R get() {
            if (failure != null) {
                throw failure;
            }
            return value;
        }
    }

    /** One call; its thread waits on {@code woken}, signalled only when it has an outcome or may start a batch. */
    private static final class Call<Q, R> {
        final Q request;
        final Condition woken;
        boolean queued = true;
        Outcome<R> outcome;
        Error error;

        Call(Q request, Condition woken) {
            this.request = request;
            this.woken = woken;
        }
    }

    private final ReentrantLock lock = new ReentrantLock();
    private final ArrayDeque<Call<Q, R>> queue = new ArrayDeque<>();
    /** The keys of the calls in running batches: a call of such a key waits for its batch to end. */
    private final Set<String> keysInFlight = new HashSet<>();
    private final Function<Q, String> key;
    private final Comparator<String> order;
    private final Runner<Q, R> runner;
    private final int maxInFlight;
    /** With a batch in flight, another may start only once this many calls are queued. */
    private final int overlapAt;
    private final int maxSize;
    private int inFlight;

    /**
     * @param key   what no two calls of one batch, or of two running batches, share (a lease name)
     * @param order the order of a batch (the database's order of its keys, so that batches lock alike)
     */
    Batcher(Function<Q, String> key, Comparator<String> order, int maxInFlight, int overlapAt, int maxSize,
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
    R submit(Q request) {
        lock.lock();
        try {
            Call<Q, R> call = new Call<>(request, lock.newCondition());
            queue.addLast(call);
            while (call.outcome == null && call.error == null) {
                if (call.queued && mayStart(call)) {
                    run(take(call));
                    wakeNext();
                } else {
                    call.woken.awaitUninterruptibly();
                }
            }
            if (call.error != null) {
                throw call.error;
            }
            return call.outcome.get();
        } finally {
            lock.unlock();
        }
    }

    /** Calls queued for a batch, not yet in one. */
    int queued() {
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
            if (outcomes == null || outcomes.size() != batch.size() || outcomes.stream().anyMatch(Objects::isNull)) {
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
                    c.outcome = outcomes.get(i);
                }
                c.woken.signal();
            }
        }
    }

    /** Whether queued {@code call} may start a batch now. Holds the lock. */
    private boolean mayStart(Call<Q, R> call) {
        return (inFlight == 0 || inFlight < maxInFlight && queue.size() >= overlapAt)
                && !keysInFlight.contains(key.apply(call.request));
    }

    /** Wakes the first queued call that may start a batch now, if any (each call waits on its own condition). Holds the lock. */
    private void wakeNext() {
        for (Call<Q, R> c : queue) {
            if (mayStart(c)) {
                c.woken.signal();
                return;
            }
        }
    }
}
