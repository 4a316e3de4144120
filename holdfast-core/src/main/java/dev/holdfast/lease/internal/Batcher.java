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
import java.util.concurrent.atomic.LongAdder;
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
 * each other.
 *
 * <p>Each batcher has {@link BatchSlots} of its own. With adaptive slots ({@link BatchSlots#adaptive()})
 * a batch that could start may wait, while that pays, for the threads the last batch (or a call
 * elsewhere, {@link #answeredElsewhere()}) answered that came back within the window the last time. A
 * thread alone never waits for itself.
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
        /** Told it may start a batch (or work out its linger anew); cleared under the lock before it parks. */
        volatile boolean woken;

        Call(Q request) {
            this.request = request;
        }

        void wake() {
            woken = true;
            LockSupport.unpark(thread);
        }
    }

    /** Statements in flight at most while calls go alone: as without batching, the pool is the bound. */
    static final int ALONE_IN_FLIGHT = 1024;

    private final BatchSlots slots;
    private final ReentrantLock lock;
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
    /** Nanos calls of this batcher waited only for threads to come back (adaptive lingering), summed. */
    private final LongAdder lingered = new LongAdder();

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
        this(new BatchSlots(), key, order, maxInFlight, overlapAt, maxSize, runner);
    }

    /** A batcher of {@code slots}, which no other batcher may have. */
    public Batcher(
            BatchSlots slots,
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
        this.slots = slots;
        this.lock = slots.lock;
        slots.take();
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
            if (slots.arrived(call.thread, System.nanoTime()) && !(mayStart(call) && slots.lingerLeft() == 0)) {
                wakeNext(); // a lingering batch may start now, or wait less (unless this call starts it)
            }
            while (!call.settled) {
                boolean mayStart = call.queued && mayStart(call);
                long linger = mayStart ? slots.lingerLeft() : 0;
                if (mayStart && linger == 0) {
                    run(take(call));
                    wakeNext();
                    continue;
                }
                call.woken = false;
                lock.unlock();
                locked = false;
                long parked = System.nanoTime();
                long deadline = parked + linger;
                while (!call.settled && !call.woken) {
                    if (linger > 0) {
                        long left = deadline - System.nanoTime();
                        if (left <= 0) {
                            break;
                        }
                        LockSupport.parkNanos(this, left);
                    } else {
                        LockSupport.park(this);
                    }
                    if (Thread.interrupted()) {
                        interrupted = true; // kept aside, else every later park would end at once
                    }
                }
                if (linger > 0) {
                    lingered.add(System.nanoTime() - parked);
                }
                if (call.settled) {
                    break; // its outcome is all it needs: no lock, so the calls of a batch leave at once
                }
                lock.lock();
                locked = true;
                if (linger > 0) {
                    slots.lingered(call.woken);
                }
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

    /**
     * Whether calls go alone now ({@link BatchSlots#alone()}): a caller may then run its call itself,
     * on its own thread and without this batcher's lock, as without batching, and report it
     * ({@link #ranAlone()}). A call of a key in a running batch may so run beside it, as two calls of
     * one key do without batching.
     */
    public boolean alone() {
        return slots.alone();
    }

    /**
     * A call ran alone, outside the queue: it counts for the pace, which takes the lock only once
     * an epoch of such calls (and for each call that ends after calls stopped going alone).
     */
    public void ranAlone() {
        if (!slots.countAlone()) {
            return;
        }
        lock.lock();
        try {
            BatchPace pace = slots.pace;
            int calls = slots.uncountedAlone();
            if (pace != null && calls > 0 && pace.completed(calls, System.nanoTime())) {
                wakeNext();
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * A call of this thread was answered elsewhere (a release, in batches of its own): its next call
     * here is waited for if it came as soon after the last such answer.
     */
    public void answeredElsewhere() {
        if (!slots.lingers()) {
            return;
        }
        lock.lock();
        try {
            slots.answered(Thread.currentThread(), BatchSlots.ELSEWHERE, System.nanoTime());
        } finally {
            lock.unlock();
        }
    }

    /** Nanos calls waited only for the linger, summed over the calls. */
    public long lingeredNanos() {
        return lingered.sum();
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
        slots.inFlight++;
        slots.started();
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
        long started = System.nanoTime();
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
            slots.inFlight--;
            long ended = System.nanoTime();
            slots.ran(ended - started);
            BatchPace pace = slots.pace;
            if (slots.measures && pace != null && pace.completed(batch.size(), ended)) {
                wakeNext(); // calls queued for a batch may go alone now
            }
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
            if (slots.lingers()) { // after every call is settled: bookkeeping must not strand them
                long now = System.nanoTime();
                batch.forEach(c -> slots.answered(c.thread, BatchSlots.BATCH, now));
            }
        }
    }

    /** Whether queued {@code call} may start a batch now, lingering aside. Holds the lock. */
    private boolean mayStart(Call<Q, R> call) {
        boolean free = slots.alone()
                ? slots.inFlight < ALONE_IN_FLIGHT
                : slots.inFlight == 0 || slots.inFlight < maxInFlight && queue.size() >= overlapAt;
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
