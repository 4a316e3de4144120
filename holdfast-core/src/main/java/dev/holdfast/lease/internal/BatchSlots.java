package dev.holdfast.lease.internal;

import org.jspecify.annotations.Nullable;

import java.util.HashMap;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The lock and the running batches of one batcher (each batcher has slots of its own: a release never
 * waits for an acquire's statement).
 *
 * <p>Adaptive ({@link #adaptive()}): a batch that could start waits for the threads the last batch
 * answered to come back with their next call, so that they go together in one statement, as long as
 * that pays. A thread is waited for only if it came back in time the last time (within the window):
 * a thread that works between its calls (holds its lease a while before it releases it) delays
 * nobody, and one that acquires again as soon as it has released is waited for after its release.
 * The window is never more than half the statements' measured time (a thread that comes back later
 * goes in the next statement at no more cost) nor an eighth of the time threads take from one call
 * to their next (so lingering costs a cycle at most an eighth). A wait that ends with a thread not
 * back stops all waiting, for a number of batches that doubles with each such wait (up to 64) and
 * halves with each wait that paid. Other slots never wait.
 */
public final class BatchSlots {
    /** Who answered a thread: a batch of these slots' batcher. */
    static final int BATCH = 0;
    /** Who answered a thread: a call outside these slots (the batcher's answeredElsewhere). */
    static final int ELSEWHERE = -2;

    private static final int MAX_QUIET_BATCHES = 64;

    final ReentrantLock lock = new ReentrantLock();
    /** Whether a batcher has these slots: no other may. */
    private boolean taken;
    /** The threads answered by a batch lately, each with the nanoTime until which it is waited for. */
    private final Map<Thread, Long> expected = new HashMap<>();
    /** Per thread (weakly: a thread that ends is forgotten), how it came back lately. */
    private final Map<Thread, Returns> returns = new WeakHashMap<>();

    private final boolean adaptive;
    /** Adaptive: whether calls go in batches or alone, measured by the acquire slots ({@code measures}), followed by the releases'. */
    final @Nullable BatchPace pace;

    final boolean measures;
    /** Calls that ran alone outside any batcher. */
    private final AtomicLong ranAlone = new AtomicLong();
    /** Of those, the ones the pace has counted (written under the lock). */
    private volatile long countedAlone;

    int inFlight;
    /** Adaptive: moving averages of a statement's time and of a thread's time from one call to its next; 0: none yet. */
    private long statementNanos;

    private long cycleNanos;
    /** Adaptive: batches left to start before anyone is waited for again, and that number after the next wait lost. */
    private int quietBatches;

    private int backOff = 1;

    /** Slots that never wait for threads (concurrent batching). */
    BatchSlots() {
        this(false, null, false);
    }

    private BatchSlots(boolean adaptive, @Nullable BatchPace pace, boolean measures) {
        this.adaptive = adaptive;
        this.pace = pace;
        this.measures = measures;
    }

    /**
     * Slots that wait for threads only as long as their measured return makes it pay, and batch at all
     * only while that is measured faster than sending each call alone ({@link BatchPace}).
     */
    public static BatchSlots adaptive() {
        return new BatchSlots(true, new BatchPace(), true);
    }

    /** Slots of their own that never wait for threads, whose calls go alone or in batches as these slots measured. */
    public BatchSlots following() {
        return new BatchSlots(false, pace, false);
    }

    /** The one batcher of these slots takes them. */
    void take() {
        lock.lock();
        try {
            if (taken) {
                throw new IllegalStateException("slots of another batcher: give each batcher slots of its own");
            }
            taken = true;
        } finally {
            lock.unlock();
        }
    }

    /** Whether calls go alone now rather than in batches. */
    boolean alone() {
        return pace != null && pace.alone();
    }

    /**
     * A call of these slots ran alone, outside any batcher: true if the pace is to count the calls it
     * has not counted yet ({@link #uncountedAlone()}, under the lock): an epoch's worth, or any once
     * calls no longer go alone, so that a call in flight when the mode changed counts for the epoch
     * it ended in, as a batch's calls do. Only slots that measure.
     */
    boolean countAlone() {
        if (!measures || pace == null) {
            return false;
        }
        long ran = ranAlone.incrementAndGet();
        return ran - countedAlone >= BatchPace.EPOCH_CALLS || !pace.alone();
    }

    /** The calls that ran alone and were not counted yet, counted now. Holds the lock. */
    int uncountedAlone() {
        long ran = ranAlone.get();
        long uncounted = ran - countedAlone;
        countedAlone = ran;
        return (int) uncounted;
    }

    /** Whether a batch may wait for threads to come back (adaptive slots only). */
    boolean lingers() {
        return adaptive;
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
        if (r.arrivedAt != 0) {
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
     * A batch of these slots ({@link #BATCH}) or a call elsewhere ({@link #ELSEWHERE}) answered {@code thread}: it is waited for
     * if it came back within the window the last time {@code by} answered it. Holds the lock.
     */
    void answered(Thread thread, int by, long now) {
        Returns r = returns.computeIfAbsent(thread, t -> new Returns());
        r.answeredAt = now;
        r.answeredBy = by;
        long took = r.took(by);
        long window = alone() ? 0 : window();
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

    /** When a thread was last answered, by whom (-1: it has come back since), and how long it took to come back after each. */
    private static final class Returns {
        long answeredAt;
        int answeredBy = -1;
        long arrivedAt;
        /** After a batch, and after an answer elsewhere; -1: not yet known (not waited for). */
        long batchNanos = -1;

        long elsewhereNanos = -1;

        long took(int by) {
            return by == ELSEWHERE ? elsewhereNanos : batchNanos;
        }

        void took(int by, long nanos) {
            if (by == ELSEWHERE) {
                elsewhereNanos = nanos;
            } else {
                batchNanos = nanos;
            }
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
        if (expected.isEmpty() || alone()) {
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
