package dev.holdfast.lease.internal;

import java.util.Arrays;

/**
 * Adaptive batching: whether batches pay here and now, measured. Epochs of {@value #EPOCH_CALLS}
 * completed acquire calls alternate between batching and sending each call alone (as without
 * batching), in pairs whose order alternates, so that a load that drifts weighs on both modes alike.
 * After {@value #PAIRS} pairs, or after {@value #EARLY_PAIRS} if every pair so far found the same mode
 * faster by more than a tenth, the mode with the better median rate is held (batching only if at
 * least 2 % faster: the rates are noisy, and alone is what no batching does); then the comparison
 * runs again, so a change of workload is followed. The hold is {@value #HOLD_EPOCHS} epochs, doubled
 * after each comparison that chose what the one before it chose, up to {@value #MAX_HOLD_EPOCHS}:
 * in a steady workload, the cost of comparing (running the slower mode for half its epochs) falls to
 * a fraction of a percent, where the first comparisons cost up to a fifth of the difference between
 * the modes.
 *
 * <p>Changed under the acquire slots' lock; {@link #alone()} may be read without it.
 */
final class BatchPace {

    static final int EPOCH_CALLS = 64;
    static final int PAIRS = 16;
    /** Pairs after which a comparison whose pairs all agree, each by more than {@link #DECISIVE}, ends. */
    static final int EARLY_PAIRS = 4;
    static final double DECISIVE = 0.10;
    static final int HOLD_EPOCHS = 8 * PAIRS;
    static final int MAX_HOLD_EPOCHS = 16 * HOLD_EPOCHS;
    /** Batching is chosen only if the median of alone's rate over batching's is below this. */
    static final double BATCHING_MUST_WIN = 0.98;

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

    /** Whether calls go alone now rather than in batches. */
    boolean alone() {
        return alone;
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
        double rate = epochCalls / (double) Math.max(1, now - epochStart);
        epochCalls = 0;
        epochStart = now;
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

    /** Whether the first {@code pairs} pairs all found the same mode faster, each by more than {@link #DECISIVE}. */
    private boolean decisive(int pairs) {
        if (pairs < EARLY_PAIRS) {
            return false;
        }
        boolean aloneFaster = true;
        boolean batchingFaster = true;
        for (int i = 0; i < pairs; i++) {
            aloneFaster &= ratios[i] > 1 + DECISIVE;
            batchingFaster &= ratios[i] < 1 - DECISIVE;
        }
        return aloneFaster || batchingFaster;
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
