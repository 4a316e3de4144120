package dev.holdfast.lease;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
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
 * key). The thread whose call starts a batch runs it; the others in it wait for their outcome. A
 * batch is sorted by key, so that two batches lock rows in the same order and cannot deadlock
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
    private final Function<Q, String> key;
    private final Runner<Q, R> runner;
    private final int maxInFlight;
    /** With a batch in flight, another may start only once this many calls are queued. */
    private final int overlapAt;
    private final int maxSize;
    private int inFlight;

    Batcher(Function<Q, String> key, int maxInFlight, int overlapAt, int maxSize, Runner<Q, R> runner) {
        if (maxInFlight < 1 || maxSize < 1 || overlapAt < 1) {
            throw new IllegalArgumentException("maxInFlight, overlapAt and maxSize must be at least 1");
        }
        this.key = key;
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
                if (call.queued && mayStart()) {
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

    /** Takes {@code first} and the calls queued before others, one per key, sorted by key. Holds the lock. */
    private List<Call<Q, R>> take(Call<Q, R> first) {
        queue.remove(first);
        List<Call<Q, R>> batch = new ArrayList<>();
        Set<String> keys = new HashSet<>();
        batch.add(first);
        keys.add(key.apply(first.request));
        for (Iterator<Call<Q, R>> it = queue.iterator(); it.hasNext() && batch.size() < maxSize; ) {
            Call<Q, R> next = it.next();
            if (keys.add(key.apply(next.request))) {
                it.remove();
                batch.add(next);
            }
        }
        batch.forEach(c -> c.queued = false);
        batch.sort(Comparator.comparing(c -> key.apply(c.request)));
        inFlight++;
        wakeNext();
        return batch;
    }

    /** Runs {@code batch} with the lock released; settles its calls (all of them, on every path) under it. */
    private void run(List<Call<Q, R>> batch) {
        List<Outcome<R>> outcomes = null;
        Throwable thrown = null;
        lock.unlock();
        try {
            outcomes = runner.run(batch.stream().map(c -> c.request).toList());
            if (outcomes.size() != batch.size()) {
                throw new IllegalStateException(outcomes.size() + " outcomes for a batch of " + batch.size());
            }
        } catch (RuntimeException | Error e) {
            thrown = e;
        } finally {
            lock.lock();
            inFlight--;
            for (int i = 0; i < batch.size(); i++) {
                Call<Q, R> c = batch.get(i);
                if (thrown instanceof Error e) {
                    c.error = e;
                } else if (thrown != null) {
                    c.outcome = Outcome.failed((RuntimeException) thrown);
                } else {
                    c.outcome = outcomes.get(i);
                }
                c.woken.signal();
            }
        }
    }

    /** Whether a queued call may start a batch now. Holds the lock. */
    private boolean mayStart() {
        return inFlight == 0 || inFlight < maxInFlight && queue.size() >= overlapAt;
    }

    /** Wakes the first queued call if it may start a batch now (each call waits on its own condition). Holds the lock. */
    private void wakeNext() {
        if (!queue.isEmpty() && mayStart()) {
            queue.peekFirst().woken.signal();
        }
    }
}
