package dev.holdfast.lease.internal;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** {@link BatchPace}: batches only while measured faster than calls alone, driven here by a clock of its own. */
class BatchPaceTest {

    /** Drives a pace with made-up rates (calls per ms) for each mode. */
    static final class Clock {
        final BatchPace pace = new BatchPace();
        long now = 1;

        /** Runs {@code epochs} epochs, each mode at its rate; returns the mode of each epoch (true: alone). */
        List<Boolean> run(int epochs, double batchedPerMs, double alonePerMs) {
            List<Boolean> modes = new ArrayList<>();
            pace.completed(0, now); // starts the first epoch's clock
            for (int e = 0; e < epochs; e++) {
                modes.add(epoch(batchedPerMs, alonePerMs));
            }
            return modes;
        }

        /** Runs epochs until a comparison has ended (the hold begins); returns the mode of each. */
        List<Boolean> compare(double batchedPerMs, double alonePerMs) {
            List<Boolean> modes = new ArrayList<>();
            pace.completed(0, now);
            do {
                modes.add(epoch(batchedPerMs, alonePerMs));
            } while (pace.comparing());
            return modes;
        }

        /** Calls pause this long within the next epoch (the service idle a while). */
        long pause;

        private boolean epoch(double batchedPerMs, double alonePerMs) {
            boolean alone = pace.alone();
            now += pause + (long) (BatchPace.EPOCH_CALLS / (alone ? alonePerMs : batchedPerMs) * 1_000_000);
            pause = 0;
            pace.completed(BatchPace.EPOCH_CALLS, now);
            return alone;
        }
    }

    @Test
    void itComparesBothModesInPairsOfAlternatingOrderThenHoldsTheFasterThenComparesAgain() {
        Clock clock = new Clock();
        List<Boolean> comparing = clock.compare(5.5, 5); // batching 10 % faster: not decisive, all pairs run
        assertThat(comparing).hasSize(2 * BatchPace.PAIRS);
        assertThat(comparing.subList(0, 8)).as("pairs: batched first, then alone first")
                .containsExactly(false, true, true, false, false, true, true, false);
        assertThat(comparing.stream().filter(a -> a)).as("half the epochs alone").hasSize(BatchPace.PAIRS);
        assertThat(clock.pace.lastMedian()).isCloseTo(5 / 5.5, within(1e-3));
        assertThat(clock.run(BatchPace.HOLD_EPOCHS, 5.5, 5)).as("batching, faster, is held").containsOnly(false);
        assertThat(clock.run(2, 5.5, 5)).as("then compared again").containsExactly(false, true);
    }

    @Test
    void aComparisonWhosePairsAllAgreeByAClearMarginEndsEarly() {
        Clock clock = new Clock();
        assertThat(clock.compare(10, 5)).as("batching twice as fast in each of two pairs")
                .hasSize(2 * BatchPace.STRONG_PAIRS);
        assertThat(clock.pace.alone()).isFalse();
        assertThat(clock.pace.lastMedian()).isCloseTo(0.5, within(1e-9));
        assertThat(new Clock().compare(2.5, 5)).as("alone twice as fast").hasSize(2 * BatchPace.STRONG_PAIRS);
        Clock tenth = new Clock();
        assertThat(tenth.compare(5.75, 5)).as("batching 15 % faster in each of four pairs")
                .hasSize(2 * BatchPace.EARLY_PAIRS);
        assertThat(tenth.pace.alone()).isFalse();
        assertThat(new Clock().compare(5, 5.75)).as("alone 15 % faster").hasSize(2 * BatchPace.EARLY_PAIRS);
    }

    @Test
    void anEpochInWhichCallsPausedCountsForNothingAndRunsAgain() {
        Clock clock = new Clock();
        List<Boolean> modes = new ArrayList<>(clock.run(2, 2.5, 5)); // a first pair: batching, then alone
        clock.pause = 1_000_000_000; // the service is idle for a second in the next epoch (the second pair's first, alone)
        modes.addAll(clock.compare(2.5, 5));
        assertThat(modes).as("the paused epoch runs again, and the comparison still ends after two pairs")
                .containsExactly(false, true, true, true, false);
        assertThat(clock.pace.alone()).isTrue();
        assertThat(clock.pace.lastMedian()).as("the pause left out").isCloseTo(2.0, within(1e-9));
    }

    @Test
    void aWorkloadThatReallySlowedDownLosesOneEpochPerMode() {
        Clock clock = new Clock();
        clock.compare(10, 5);
        clock.run(BatchPace.HOLD_EPOCHS, 10, 5); // batching held; then a new comparison, 10 and 40 times slower
        List<Boolean> modes = clock.compare(0.25, 0.5);
        assertThat(modes).as("one epoch of each mode again, as their references are set anew, then two pairs")
                .hasSize(2 * BatchPace.STRONG_PAIRS + 2);
        assertThat(clock.pace.alone()).isTrue();
        assertThat(clock.pace.lastMedian()).isCloseTo(2.0, within(1e-9));
    }

    @Test
    void eachComparisonThatChoosesAsTheLastDoublesTheHoldUpToTheMaximumAndAChangeResetsIt() {
        Clock clock = new Clock();
        clock.compare(2.5, 5);
        List<Integer> holds = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            holds.add(clock.pace.holdEpochs());
            assertThat(clock.run(clock.pace.holdEpochs(), 2.5, 5)).as("alone, held").containsOnly(true);
            clock.compare(2.5, 5);
        }
        int h = BatchPace.HOLD_EPOCHS;
        assertThat(holds).containsExactly(h, 2 * h, 4 * h, 8 * h, 16 * h, 16 * h, 16 * h);
        assertThat(BatchPace.MAX_HOLD_EPOCHS).isEqualTo(16 * h);
        clock.run(clock.pace.holdEpochs(), 2.5, 5);
        clock.compare(10, 5);
        assertThat(clock.pace.alone()).as("batching became faster").isFalse();
        assertThat(clock.pace.holdEpochs()).as("a changed choice is held the shortest").isEqualTo(h);
    }

    @Test
    void callsGoAloneWhenBatchingIsNotFasterByTwoPercent() {
        for (double batched : new double[] {5, 5.05, 4}) {  // as fast, a 1 % gain within the noise, slower
            Clock clock = new Clock();
            clock.compare(batched, 5);
            assertThat(clock.pace.alone()).as("batching at " + batched).isTrue();
            assertThat(clock.run(BatchPace.HOLD_EPOCHS, batched, 5)).containsOnly(true);
        }
    }

    @Test
    void aChangeOfWorkloadIsFollowedAtTheNextComparison() {
        Clock clock = new Clock();
        clock.compare(10, 5);
        clock.run(BatchPace.HOLD_EPOCHS, 10, 5);
        assertThat(clock.pace.alone()).isFalse();
        clock.compare(4, 5);
        assertThat(clock.pace.alone()).as("batching became slower").isTrue();
        assertThat(clock.pace.lastMedian()).isCloseTo(1.25, within(1e-9));
    }

    @Test
    void callsThatRanAloneAreCountedExactlyAndAStragglerCountsForTheEpochItEndedIn() {
        BatchSlots slots = BatchSlots.adaptive();
        BatchPace pace = slots.pace;
        assertThat(pace).isNotNull();
        long now = 1;
        pace.completed(0, now);
        while (!pace.alone()) { // a comparison that finds calls alone twice as fast
            now += pace.alone() ? 1_000_000 : 2_000_000;
            pace.completed(BatchPace.EPOCH_CALLS, now);
        }
        for (int i = 1; i < BatchPace.EPOCH_CALLS; i++) {
            assertThat(slots.countAlone()).as("call " + i + " of an epoch").isFalse();
        }
        assertThat(slots.countAlone()).as("an epoch's worth").isTrue();
        assertThat(slots.uncountedAlone()).isEqualTo(BatchPace.EPOCH_CALLS);
        while (pace.alone()) { // the hold ends and the next comparison starts with a batching epoch
            now += 1_000_000;
            pace.completed(BatchPace.EPOCH_CALLS, now);
        }
        assertThat(slots.countAlone()).as("a call in flight when batching began: counted at once").isTrue();
        assertThat(slots.uncountedAlone()).isEqualTo(1);
        now += 2_000_000;
        pace.completed(BatchPace.EPOCH_CALLS, now); // the batching epoch ends: alone again
        assertThat(pace.alone()).isTrue();
        for (int i = 1; i < BatchPace.EPOCH_CALLS; i++) {
            assertThat(slots.countAlone()).as("call " + i + " of the next alone epoch").isFalse();
        }
        assertThat(slots.countAlone()).isTrue();
        assertThat(slots.uncountedAlone()).as("a whole epoch, not shortened by the straggler").isEqualTo(BatchPace.EPOCH_CALLS);
    }

    @Test
    void whileCallsGoAloneACallFindingAStatementInFlightStartsItsOwnAtOnce() throws Exception {
        BatcherTest.Runner runner = new BatcherTest.Runner();
        BatchSlots slots = BatchSlots.adaptive();
        Batcher<String, String> batcher = new Batcher<>(slots, k -> k.substring(0, 1), LeaseBatches.CODE_POINT_ORDER, 4, 4, 64, runner);
        BatchPace pace = slots.pace;
        assertThat(pace).isNotNull();
        Clock clock = new Clock();
        slots.lock.lock();
        try { // batching measured slower: the same pace object, driven by the clock
            pace.completed(0, clock.now);
            while (!pace.alone() || Double.isNaN(pace.lastMedian())) {
                boolean alone = pace.alone();
                clock.now += alone ? 1_000_000 : 2_000_000;
                pace.completed(BatchPace.EPOCH_CALLS, clock.now);
            }
        } finally {
            slots.lock.unlock();
        }
        CompletableFuture<Object> held = runner.startHeld(batcher, "a1");
        assertThat(batcher.submit("b1")).as("not queued behind a1's statement").isEqualTo("done b1");
        assertThat(batcher.submit("c1")).isEqualTo("done c1");
        assertThat(held).isNotDone();
        runner.held.get("a1").countDown();
        assertThat(held.get(5, TimeUnit.SECONDS)).isEqualTo("done a1");
        assertThat(runner.batches).containsExactlyInAnyOrder(List.of("a1"), List.of("b1"), List.of("c1"));
    }
}
