package dev.holdfast.lease.internal;

import dev.holdfast.internal.Invariants;
import org.jspecify.annotations.Nullable;

import java.util.Objects;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
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
 * <p>Batchers of several kinds may share their {@link Slots}: in lockstep, with a linger, a batch
 * waits for the threads the last batch answered that came back within the linger the last time (each
 * thread's acquire, then its release, go in one statement with the others'). A thread alone never
 * waits for itself, and nobody waits longer than the linger after a batch ended.
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
        @Nullable Outcome<R> outcome;
        @Nullable Error error;
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

    /**
     * The lock and the running batches of one batcher, or of several that share them (lockstep): then
     * a batch of one kind counts against the statements in flight of all, and with a linger a batch
     * that could start waits, at most that long after the last batch ended, for the threads that batch
     * answered to come back with their next call, so that they go together in one statement. Only
     * threads that came back within the linger the last time this kind answered them are waited for:
     * a thread that works between its calls (holds its lease a while before it releases it) delays
     * nobody, and one that acquires again as soon as it has released is waited for after its release.
     *
     * <p>Adaptive ({@link #adaptive()}): no fixed linger. A thread is waited for only if it came back
     * in time the last time (within the window), and the window is never more than half the
     * statements' measured time (a thread that comes back later goes in the next statement at no more
     * cost) nor an eighth of the time threads take from one call to their next (so lingering costs a
     * cycle at most an eighth). A wait that ends with a thread not back stops all waiting, for a number
     * of batches that doubles with each such wait (up to 64) and halves with each wait that paid.
     */
    public static final class Slots {
        /** Member index of calls answered outside these slots ({@link Batcher#answeredElsewhere}). */
        static final int ELSEWHERE = -2;
        private static final int MAX_QUIET_BATCHES = 64;

        final ReentrantLock lock = new ReentrantLock();
        private final List<Batcher<?, ?>> members = new ArrayList<>();
        /** The threads answered by a batch lately, each with the nanoTime until which it is waited for. */
        private final Map<Thread, Long> expected = new HashMap<>();
        /** Per thread (weakly: a thread that ends is forgotten), how it came back lately. */
        private final Map<Thread, Returns> returns = new WeakHashMap<>();
        private final long lingerNanos;
        private final boolean adaptive;
        private int inFlight;
        /** Adaptive: moving averages of a statement's time and of a thread's time from one call to its next; 0: none yet. */
        private long statementNanos;
        private long cycleNanos;
        /** Adaptive: batches left to start before anyone is waited for again, and that number after the next wait lost. */
        private int quietBatches;
        private int backOff = 1;

        /** Slots of one batcher: no linger. */
        Slots() {
            this(0);
        }

        /** @param lingerNanos how long after a batch its threads are waited for; 0: never */
        public Slots(long lingerNanos) {
            this(lingerNanos, false);
        }

        private Slots(long lingerNanos, boolean adaptive) {
            if (lingerNanos < 0) {
                throw new IllegalArgumentException("linger must not be negative");
            }
            this.lingerNanos = lingerNanos;
            this.adaptive = adaptive;
        }

        /** Slots that wait for threads only as long as their measured return makes it pay (see the class). */
        public static Slots adaptive() {
            return new Slots(0, true);
        }

        private boolean lingers() {
            return adaptive || lingerNanos > 0;
        }

        /**
         * A call of {@code thread} arrived: it is waited for no more, and its time to come back is
         * noted. True if that ends the wait sooner (it was waited for longest, or last): the waiting
         * calls must work out their linger anew. Holds the lock.
         */
        boolean arrived(Thread thread, long now) {
            if (!lingers()) {
                return false;
            }
            Returns r = returns.computeIfAbsent(thread, t -> new Returns());
            if (r.answeredBy != -1) {
                r.took(r.answeredBy, now - r.answeredAt);
                r.answeredBy = -1;
            }
            if (adaptive && r.arrivedAt != 0) {
                cycleNanos = average(cycleNanos, now - r.arrivedAt);
            }
            r.arrivedAt = now;
            Long until = expected.remove(thread);
            if (until == null) {
                return false;
            }
            for (long other : expected.values()) {
                if (other >= until) {
                    return false; // the wait ends no sooner: waking the waiting calls would only cost a switch
                }
            }
            return true;
        }

        /**
         * A batch of member {@code by} (or {@link #ELSEWHERE}) answered {@code thread}: it is waited for
         * if it came back within the window the last time {@code by} answered it. Holds the lock.
         */
        void answered(Thread thread, int by, long now) {
            Returns r = returns.computeIfAbsent(thread, t -> new Returns());
            r.answeredAt = now;
            r.answeredBy = by;
            long took = r.took(by);
            long window = adaptive ? window() : lingerNanos;
            if (took >= 0 && took < window) {
                expected.put(thread, now + window);
            }
        }

        /** Adaptive: how long after its batch a thread may be waited for now; 0: nobody is. */
        long window() {
            if (quietBatches > 0 || statementNanos == 0) {
                return 0;
            }
            return cycleNanos == 0 ? statementNanos / 2 : Math.min(statementNanos / 2, cycleNanos / 8);
        }

        /** Adaptive: a statement of these slots took {@code nanos}. Holds the lock. */
        void ran(long nanos) {
            if (adaptive) {
                statementNanos = average(statementNanos, nanos);
            }
        }

        /** A batch starts. Holds the lock. */
        void started() {
            if (quietBatches > 0) {
                quietBatches--;
            }
        }

        /**
         * Adaptive: a call lingered and {@code paid} (woken by an arrival or a batch) or not (its wait
         * ran out with a thread not back): then nobody is waited for during the next batches. Holds the lock.
         */
        void lingered(boolean paid) {
            if (!adaptive) {
                return;
            }
            if (paid) {
                backOff = Math.max(1, backOff / 2);
            } else if (quietBatches == 0) { // calls that gave up at the same time count once
                quietBatches = backOff + 1; // + the batch of the call that gave up, which starts now
                backOff = Math.min(MAX_QUIET_BATCHES, backOff * 2);
                expected.clear();
            }
        }

        private static long average(long average, long sample) {
            return average == 0 ? sample : average + (sample - average) / 8;
        }

        /** When a thread was last answered, by which member (-1: it has come back since), and how long it took to come back after each. */
        private static final class Returns {
            long answeredAt;
            int answeredBy = -1;
            long arrivedAt;
            /** Per member, then elsewhere; -1: not yet known (not waited for). */
            long[] tookNanos = new long[0];
            long elsewhereNanos = -1;

            long took(int by) {
                return by == ELSEWHERE ? elsewhereNanos : by < tookNanos.length ? tookNanos[by] : -1;
            }

            void took(int by, long nanos) {
                if (by == ELSEWHERE) {
                    elsewhereNanos = nanos;
                    return;
                }
                if (by >= tookNanos.length) { // a batcher that joined the slots after this thread's first call
                    int known = tookNanos.length;
                    tookNanos = Arrays.copyOf(tookNanos, by + 1);
                    Arrays.fill(tookNanos, known, tookNanos.length, -1);
                }
                tookNanos[by] = nanos;
            }
        }

        /** Tests: the threads waited for now, and until when. */
        Map<Thread, Long> expected() {
            lock.lock();
            try {
                return Map.copyOf(expected);
            } finally {
                lock.unlock();
            }
        }

        /** Nanos left to wait for the threads still expected (forgetting those given up); 0 if none. Holds the lock. */
        long lingerLeft() {
            if (expected.isEmpty()) {
                return 0;
            }
            long now = System.nanoTime();
            expected.values().removeIf(until -> until - now <= 0);
            long left = 0;
            for (long until : expected.values()) {
                left = Math.max(left, until - now);
            }
            return left;
        }
    }

    private final Slots slots;
    /** This batcher's place among the members of its slots. */
    private final int member;
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
    /** Nanos calls of this batcher waited only for the linger, summed. */
    private final LongAdder lingered = new LongAdder();

    /**
     * @param key   what no two calls of one batch, or of two running batches, share (a lease name)
     * @param order the order of a batch (the database's order of its keys, so that batches lock alike)
     */
    public Batcher(Function<Q, String> key, Comparator<String> order, int maxInFlight, int overlapAt, int maxSize,
            Runner<Q, R> runner) {
        this(new Slots(), key, order, maxInFlight, overlapAt, maxSize, runner);
    }

    /** A batcher whose batches count against {@code slots}, which other batchers may share. */
    public Batcher(Slots slots, Function<Q, String> key, Comparator<String> order, int maxInFlight, int overlapAt, int maxSize,
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
        slots.lock.lock();
        try {
            this.member = slots.members.size();
            slots.members.add(this);
        } finally {
            slots.lock.unlock();
        }
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
            return Invariants.nonNull(call.outcome, "a settled call has an outcome or an error").get();
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
     * A call of this thread was answered elsewhere (a release, in batches of its own): its next call
     * here is waited for if it came as soon after the last such answer.
     */
    public void answeredElsewhere() {
        if (!slots.lingers()) {
            return;
        }
        lock.lock();
        try {
            slots.answered(Thread.currentThread(), Slots.ELSEWHERE, System.nanoTime());
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
            slots.inFlight--;
            slots.ran(System.nanoTime() - started);
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
                    c.outcome = Invariants.nonNull(outcomes, "set and checked when nothing was thrown").get(i);
                }
                c.settled = true;
                c.wake();
            }
            if (slots.lingers()) { // after every call is settled: bookkeeping must not strand them
                long now = System.nanoTime();
                batch.forEach(c -> slots.answered(c.thread, member, now));
            }
        }
    }

    /** Whether queued {@code call} may start a batch now, lingering aside. Holds the lock. */
    private boolean mayStart(Call<Q, R> call) {
        return (slots.inFlight == 0 || slots.inFlight < maxInFlight && queue.size() >= overlapAt)
                && !keysInFlight.contains(key.apply(call.request));
    }

    /** Wakes, in each batcher of the slots, the first queued call that may start a batch now. Holds the lock. */
    private void wakeNext() {
        for (Batcher<?, ?> member : slots.members) {
            member.wakeFirst();
        }
    }

    /** Wakes the first queued call that may start a batch now, if any (each call waits on its own condition). Holds the lock. */
    private void wakeFirst() {
        for (Call<Q, R> c : queue) {
            if (mayStart(c)) {
                c.wake();
                return;
            }
        }
    }
}
