package dev.holdfast.lease.internal;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Adaptive batching: whether batches pay here and now, measured. Epochs of {@value #EPOCH_CALLS}
 * completed acquire calls alternate between batching and sending each call alone (as without
 * batching), in pairs whose order alternates, so that a load that drifts weighs on both modes alike.
 * After {@value #PAIRS} pairs, or earlier when every pair so far found the same mode faster by a clear
 * margin (after {@value #STRONG_PAIRS} pairs by more than a quarter, after {@value #EARLY_PAIRS} by more
 * than a tenth; calls alone sooner, after one pair by more than half and after two by more than a
 * tenth: with both cores saturated, MariaDB's batching epochs at 8 threads ran at 0.2–0.9× of alone's),
 * the mode with the better median rate is held (batching only if at
 * least 2 % faster: the rates are noisy, and alone is what no batching does); then the comparison
 * runs again, so a change of workload is followed. The hold is {@value #HOLD_EPOCHS} epochs, doubled
 * after each comparison that chose what the one before it chose, up to {@value #MAX_HOLD_EPOCHS}:
 * in a steady workload, the cost of comparing (running the slower mode for half its epochs) falls to
 * a fraction of a percent, where the first comparisons cost up to a fifth of the difference between
 * the modes.
 *
 * <p>An epoch that took more than {@value #STRADDLED} times as long as the last one of its mode counts
 * for nothing and runs again: calls paused within it (the service was idle a while), and its rate says
 * nothing of the mode; with the rates of a busy service, one such epoch made a comparison run all its
 * pairs. Its time becomes the mode's reference, so a workload that really slowed down loses one epoch.
 *
 * <p>Comparisons run only while calls come at once: a batch pays only for calls that overlap, and at
 * a low rate (two threads on a saturated machine: 200 pairs/s) a comparison spans seconds, in which
 * half the epochs batch calls that had nobody to go with and so wait for each other's statements.
 * An epoch whose acquires found fewer than {@value #MIN_OVERLAP} others in flight on average when they
 * arrived ({@link #arrived()}) ends a comparison, or a hold of batching: calls go alone for a hold, and
 * after it the first epoch that found enough starts a comparison (not at once: calls wait in a batching
 * epoch, so it finds more in flight than an alone one, and a comparison started at once would be ended
 * again by its alone epoch). An uncrowded epoch within a hold of calls alone just counts for the hold.
 * So one or two threads never batch, whatever the load (nor did four back to back, measured on MariaDB:
 * 1.1–1.5 others in flight on average).
 *
 * <p>Changed under the acquire slots' lock; {@link #alone()}, {@link #arrived()} and {@link #left()}
 * may be called without it.
 */
final class BatchPace {

    static final int EPOCH_CALLS = 64;
    static final int PAIRS = 16;
    /** Pairs after which a comparison whose pairs all agree, each by more than {@link #DECISIVE}, ends. */
    static final int EARLY_PAIRS = 4;

    static final double DECISIVE = 0.10;
    /** Pairs after which a comparison whose pairs all agree, each by more than {@link #STRONG}, ends. */
    static final int STRONG_PAIRS = 2;

    static final double STRONG = 0.25;
    /** A comparison whose first pair found calls alone faster by more than this ends after it, with calls alone. */
    static final double CLEAR_LOSS = 0.5;
    /** An epoch this many times as long as the last of its mode straddled a pause: it is run again. */
    static final int STRADDLED = 8;

    static final int HOLD_EPOCHS = 8 * PAIRS;
    static final int MAX_HOLD_EPOCHS = 16 * HOLD_EPOCHS;
    /** Batching is chosen only if the median of alone's rate over batching's is below this. */
    static final double BATCHING_MUST_WIN = 0.98;
    /** Other acquires in flight an acquire finds on arrival, on average over an epoch, for batching to be tried. */
    static final double MIN_OVERLAP = 2.0;

    private volatile boolean alone;
    private boolean comparing = true;
    /** Epochs into the comparison or the hold. */
    private int epoch;

    private long epochStart;
    private int epochCalls;
    private double firstRate;
    private final double[] ratios = new double[PAIRS];
    private double lastMedian = Double.NaN;
    /** Epochs of the current hold: longer after each comparison that chose as the one before. */
    private int holdEpochs = HOLD_EPOCHS;
    /** The time of the last epoch of each mode (0 batching, 1 alone), 0 before the first. */
    private final long[] lastEpochNanos = new long[2];
    /** Acquires in flight now; the others each found in flight on arrival, summed, and the arrivals. */
    private final AtomicInteger inFlight = new AtomicInteger();

    private final LongAdder found = new LongAdder();
    private final LongAdder arrivals = new LongAdder();
    /** {@code found} and {@code arrivals} when the epoch began. */
    private long foundBefore;

    private long arrivalsBefore;
    private double lastOverlap = Double.NaN;

    /** Whether calls go alone now rather than in batches. */
    boolean alone() {
        return alone;
    }

    /** An acquire arrived (alone or for a batch): it counts the others in flight. Pair with {@link #left()}. */
    void arrived() {
        found.add(inFlight.getAndIncrement());
        arrivals.increment();
    }

    /** An acquire that {@link #arrived()} returned or failed. */
    void left() {
        inFlight.decrementAndGet();
    }

    /** Tests: the acquires in flight on average that the last epoch's acquires found; NaN before the first epoch ended. */
    double lastOverlap() {
        return lastOverlap;
    }

    /** Tests: the median of alone's rate over batching's in the last comparison; NaN before the first. */
    double lastMedian() {
        return lastMedian;
    }

    /** {@code calls} calls completed at {@code now}; true if that changed the mode. Under the lock. */
    boolean completed(int calls, long now) {
        if (epochCalls == 0 && epochStart == 0) {
            epochStart = now;
        }
        epochCalls += calls;
        if (epochCalls < EPOCH_CALLS) {
            return false;
        }
        long took = Math.max(1, now - epochStart);
        double rate = epochCalls / (double) took;
        epochCalls = 0;
        epochStart = now;
        if (!crowded()) {
            lastEpochNanos[alone ? 1 : 0] = took;
            boolean was = alone;
            if (comparing || !alone) { // the comparison, or batching held, ends: with so few at once no batch pays
                comparing = false;
                epoch = 0; // a hold alone: a batching epoch counts more calls in flight, so one at once would flap
            } else {
                epoch = Math.min(epoch + 1, holdEpochs);
            }
            alone = true;
            return alone != was;
        }
        int mode = alone ? 1 : 0;
        boolean straddled = lastEpochNanos[mode] > 0 && took > STRADDLED * lastEpochNanos[mode];
        lastEpochNanos[mode] = took;
        if (straddled) {
            return false; // the same epoch again
        }
        boolean was = alone;
        if (!comparing) {
            if (++epoch >= holdEpochs) {
                comparing = true;
                epoch = 0;
                alone = startsAlone(0);
            }
            return alone != was;
        }
        int pair = epoch / 2;
        if (epoch % 2 == 0) {
            firstRate = rate;
        } else {
            boolean aloneFirst = startsAlone(pair);
            ratios[pair] = (aloneFirst ? firstRate : rate) / (aloneFirst ? rate : firstRate);
        }
        epoch++;
        if (epoch == 2 * PAIRS || epoch % 2 == 0 && decisive(epoch / 2)) {
            boolean first = Double.isNaN(lastMedian);
            boolean aloneBefore = !(lastMedian < BATCHING_MUST_WIN);
            lastMedian = median(epoch / 2);
            alone = !(lastMedian < BATCHING_MUST_WIN);
            holdEpochs = !first && alone == aloneBefore ? Math.min(MAX_HOLD_EPOCHS, holdEpochs * 2) : HOLD_EPOCHS;
            comparing = false;
            epoch = 0;
        } else {
            alone = epoch % 2 == 0 ? startsAlone(epoch / 2) : !startsAlone(epoch / 2);
        }
        return alone != was;
    }

    /** Whether the epoch that ends found at least {@link #MIN_OVERLAP} acquires in flight on average; starts the next. */
    private boolean crowded() {
        long f = found.sum();
        long a = arrivals.sum();
        lastOverlap = a == arrivalsBefore ? 0 : (f - foundBefore) / (double) (a - arrivalsBefore);
        foundBefore = f;
        arrivalsBefore = a;
        return lastOverlap >= MIN_OVERLAP;
    }

    /**
     * Whether the first {@code pairs} pairs all found the same mode faster, each by more than
     * {@link #STRONG} (from {@value #STRONG_PAIRS} pairs) or {@link #DECISIVE} (from {@value #EARLY_PAIRS});
     * calls alone need less: more than {@link #CLEAR_LOSS} in one pair, or {@link #DECISIVE} in
     * {@value #STRONG_PAIRS}. Alone is what no batching does, so choosing it wrongly forgoes a gain and
     * loses nothing, while each pair more costs a batching epoch at the slower rate.
     */
    private boolean decisive(int pairs) {
        return aloneFaster(pairs, CLEAR_LOSS)
                || pairs >= STRONG_PAIRS && (agree(pairs, STRONG) || aloneFaster(pairs, DECISIVE))
                || pairs >= EARLY_PAIRS && agree(pairs, DECISIVE);
    }

    private boolean agree(int pairs, double margin) {
        boolean batchingFaster = true;
        for (int i = 0; i < pairs; i++) {
            batchingFaster &= ratios[i] < 1 - margin;
        }
        return batchingFaster || aloneFaster(pairs, margin);
    }

    /** Whether each of the first {@code pairs} pairs found calls alone faster by more than {@code margin}. */
    private boolean aloneFaster(int pairs, double margin) {
        for (int i = 0; i < pairs; i++) {
            if (!(ratios[i] > 1 + margin)) {
                return false;
            }
        }
        return true;
    }

    private double median(int pairs) {
        double[] sorted = Arrays.copyOf(ratios, pairs);
        Arrays.sort(sorted);
        return pairs % 2 == 0 ? (sorted[pairs / 2 - 1] + sorted[pairs / 2]) / 2 : sorted[pairs / 2];
    }

    /** Tests: whether a comparison runs now. */
    boolean comparing() {
        return comparing;
    }

    /** Tests: epochs of the current (or next) hold. */
    int holdEpochs() {
        return holdEpochs;
    }

    /** Odd pairs start alone, even ones batching. */
    private static boolean startsAlone(int pair) {
        return pair % 2 == 1;
    }
}
