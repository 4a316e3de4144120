package dev.holdfast.lease.internal;

import java.util.Arrays;

/**
 * Adaptive batching: whether batches pay here and now, measured. Epochs of {@value #EPOCH_CALLS}
 * completed acquire calls alternate between batching and sending each call alone (as without
 * batching), in pairs whose order alternates, so that a load that drifts weighs on both modes alike.
 * After {@value #PAIRS} pairs the mode with the better median rate runs {@value #HOLD_EPOCHS} epochs
 * (batching only if at least 2 % faster: the rates are noisy, and alone is what no batching does);
 * then the comparison runs again, so a change of workload is followed. Comparing costs a fifth of
 * the time at most half the difference between the modes.
 *
 * <p>Changed under the acquire slots' lock; {@link #alone()} may be read without it.
 */
final class BatchPace {

    static final int EPOCH_CALLS = 64;
    static final int PAIRS = 16;
    static final int HOLD_EPOCHS = 8 * PAIRS;
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
            if (++epoch >= HOLD_EPOCHS) {
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
        if (epoch == 2 * PAIRS) {
            double[] sorted = ratios.clone();
            Arrays.sort(sorted);
            lastMedian = (sorted[PAIRS / 2 - 1] + sorted[PAIRS / 2]) / 2;
            alone = !(lastMedian < BATCHING_MUST_WIN);
            comparing = false;
            epoch = 0;
        } else {
            alone = epoch % 2 == 0 ? startsAlone(epoch / 2) : !startsAlone(epoch / 2);
        }
        return alone != was;
    }

    /** Odd pairs start alone, even ones batching. */
    private static boolean startsAlone(int pair) {
        return pair % 2 == 1;
    }
}
