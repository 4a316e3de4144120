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

    /** Other acquires in flight that each call of a {@link Clock} finds: enough for batching to be tried. */
    static final int CROWD = 3;

    /**
     * Makes {@code others} acquires of {@code pace} stay in flight, as calls of other threads would:
     * every later call finds them on arrival. Returns them, to end them with {@link #leave}.
     */
    static int crowd(BatchPace pace, int others) {
        for (int i = 0; i < others; i++) {
            pace.arrived();
        }
        return others;
    }

    /** Ends {@code others} acquires in flight of {@code pace}. */
    static void leave(BatchPace pace, int others) {
        for (int i = 0; i < others; i++) {
            pace.left();
        }
    }

    /** An epoch of calls that each found the crowd in flight ends at {@code now}; true if that changed the mode. */
    static boolean epochEnds(BatchPace pace, long now) {
        for (int i = 0; i < BatchPace.EPOCH_CALLS; i++) {
            pace.arrived();
            pace.left();
        }
        return pace.completed(BatchPace.EPOCH_CALLS, now);
    }

    /** Drives a pace with made-up rates (calls per ms) for each mode; each call finds {@link #CROWD} others in flight. */
    static final class Clock {
        final BatchPace pace = new BatchPace();
        long now = 1;

        Clock() {
            this(CROWD);
        }

        /** A clock whose calls each find {@code others} in flight. */
        Clock(int others) {
            crowd(pace, others);
        }

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
            epochEnds(pace, now);
            return alone;
        }
    }

    @Test
    void itComparesBothModesInPairsOfAlternatingOrderThenHoldsTheFasterThenComparesAgain() {
        Clock clock = new Clock();
        List<Boolean> comparing = clock.compare(5.5, 5); // batching 10 % faster: not decisive, all pairs run
        assertThat(comparing).hasSize(2 * BatchPace.PAIRS);
        assertThat(comparing.subList(0, 8))
                .as("pairs: batched first, then alone first")
                .containsExactly(false, true, true, false, false, true, true, false);
        assertThat(comparing.stream().filter(a -> a))
                .as("half the epochs alone")
                .hasSize(BatchPace.PAIRS);
        assertThat(clock.pace.lastMedian()).isCloseTo(5 / 5.5, within(1e-3));
        assertThat(clock.run(BatchPace.HOLD_EPOCHS, 5.5, 5))
                .as("batching, faster, is held")
                .containsOnly(false);
        assertThat(clock.run(2, 5.5, 5)).as("then compared again").containsExactly(false, true);
    }

    /**
     * One or two threads: each call finds at most one other in flight, so no batch can pay. After the
     * first epoch calls go alone and no comparison runs, even where batching would measure faster.
     */
    @Test
    void callsThatFindFewerThanTwoOthersInFlightGoAloneAndAreNeverCompared() {
        for (int others : new int[] {0, 1}) {
            Clock clock = new Clock(others);
            List<Boolean> modes = clock.run(4 * BatchPace.HOLD_EPOCHS, 10, 5);
            assertThat(modes.get(0)).as("a new pace batches its first epoch").isFalse();
            assertThat(modes.subList(1, modes.size()))
                    .as(others + " others in flight: alone")
                    .containsOnly(true);
            assertThat(clock.pace.comparing()).isFalse();
            assertThat(clock.pace.lastMedian()).as("never compared").isNaN();
            assertThat(clock.pace.lastOverlap()).isEqualTo((double) others);
        }
    }

    /**
     * A comparison, or batching held, ends with calls alone in the first epoch whose calls found fewer
     * than {@link BatchPace#MIN_OVERLAP} others in flight on average; calls then go alone for a hold, and
     * the first epoch after it that found enough starts a comparison from its first pair.
     */
    @Test
    void aComparisonOrABatchingHoldEndsWhenCallsStopOverlappingAndResumesWhenTheyDoAgain() {
        Clock clock = new Clock(); // 3 others in flight
        clock.compare(10, 5);
        assertThat(clock.pace.alone()).as("batching measured faster, held").isFalse();
        leave(clock.pace, 2); // one other left
        assertThat(clock.run(BatchPace.HOLD_EPOCHS, 10, 5))
                .as("the hold ends at the first epoch that found one")
                .startsWith(false)
                .containsOnlyOnce(false);
        assertThat(clock.pace.comparing()).isFalse();
        crowd(
                clock.pace,
                1); // two others, but the next epoch finds (1 + 64 × 2) / 65: the new one's own arrival found one
        assertThat(clock.run(1, 10, 5)).containsExactly(true);
        assertThat(clock.pace.lastOverlap())
                .isCloseTo((1 + 2.0 * BatchPace.EPOCH_CALLS) / (1 + BatchPace.EPOCH_CALLS), within(1e-9));
        assertThat(clock.pace.comparing()).as("not yet").isFalse();
        assertThat(clock.run(1, 10, 5)).containsExactly(true);
        assertThat(clock.pace.lastOverlap()).isEqualTo(2.0);
        assertThat(clock.pace.comparing())
                .as("two found in flight: a comparison starts")
                .isTrue();
        assertThat(clock.run(3, 5.5, 5))
                .as("its first pair, then the second's first epoch")
                .containsExactly(false, true, true);
        leave(clock.pace, 1);
        assertThat(clock.run(2, 5.5, 5))
                .as("the comparison ended in its epoch that found one other")
                .containsExactly(false, true);
        assertThat(clock.pace.comparing()).isFalse();
        assertThat(clock.pace.alone()).isTrue();
        crowd(clock.pace, 1);
        assertThat(clock.run(BatchPace.HOLD_EPOCHS - 2, 5.5, 5))
                .as("crowded again, yet alone until the hold is over")
                .containsOnly(true);
        assertThat(clock.pace.comparing()).isFalse();
        assertThat(clock.run(1, 5.5, 5)).containsExactly(true);
        assertThat(clock.pace.comparing())
                .as("the hold is over: a comparison starts")
                .isTrue();
        assertThat(clock.run(2, 5.5, 5)).as("from its first pair again").containsExactly(false, true);
    }

    @Test
    void aComparisonWhosePairsAllAgreeByAClearMarginEndsEarly() {
        Clock clock = new Clock();
        assertThat(clock.compare(10, 5))
                .as("batching twice as fast in each of two pairs")
                .hasSize(2 * BatchPace.STRONG_PAIRS);
        assertThat(clock.pace.alone()).isFalse();
        assertThat(clock.pace.lastMedian()).isCloseTo(0.5, within(1e-9));
        Clock tenth = new Clock();
        assertThat(tenth.compare(5.75, 5))
                .as("batching 15 % faster in each of four pairs")
                .hasSize(2 * BatchPace.EARLY_PAIRS);
        assertThat(tenth.pace.alone()).isFalse();
    }

    /**
     * Calls alone, what no batching does, win on less evidence: a wrong choice forgoes a gain and loses
     * nothing, while each pair more runs a batching epoch at the slower rate.
     */
    @Test
    void aComparisonEndsSoonerWhenCallsAloneAreFaster() {
        Clock twice = new Clock();
        assertThat(twice.compare(2.5, 5)).as("alone twice as fast: one pair").hasSize(2);
        assertThat(twice.pace.alone()).isTrue();
        assertThat(twice.pace.lastMedian()).isCloseTo(2.0, within(1e-9));
        assertThat(new Clock().compare(3.4, 5))
                .as("alone 47 % faster: not clear after one pair, strong after two")
                .hasSize(4);
        Clock tenth = new Clock();
        assertThat(tenth.compare(5, 5.75))
                .as("alone 15 % faster in each of two pairs")
                .hasSize(4);
        assertThat(tenth.pace.alone()).isTrue();
        assertThat(new Clock().compare(5, 5.4))
                .as("alone 8 % faster: not decisive, all pairs")
                .hasSize(2 * BatchPace.PAIRS);
    }

    @Test
    void anEpochInWhichCallsPausedCountsForNothingAndRunsAgain() {
        Clock clock = new Clock();
        List<Boolean> modes = new ArrayList<>(clock.run(2, 10, 5)); // a first pair: batching, then alone
        clock.pause =
                1_000_000_000; // the service is idle for a second in the next epoch (the second pair's first, alone)
        modes.addAll(clock.compare(10, 5));
        assertThat(modes)
                .as("the paused epoch runs again, and the comparison still ends after two pairs")
                .containsExactly(false, true, true, true, false);
        assertThat(clock.pace.alone()).isFalse();
        assertThat(clock.pace.lastMedian()).as("the pause left out").isCloseTo(0.5, within(1e-9));
    }

    @Test
    void aWorkloadThatReallySlowedDownLosesOneEpochPerMode() {
        Clock clock = new Clock();
        clock.compare(10, 5);
        clock.run(BatchPace.HOLD_EPOCHS, 10, 5); // batching held; then a new comparison, 10 and 40 times slower
        List<Boolean> modes = clock.compare(0.25, 0.5);
        assertThat(modes)
                .as("one epoch of each mode again, as their references are set anew, then one pair")
                .hasSize(2 + 2);
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
            assertThat(clock.run(clock.pace.holdEpochs(), 2.5, 5))
                    .as("alone, held")
                    .containsOnly(true);
            clock.compare(2.5, 5);
        }
        int h = BatchPace.HOLD_EPOCHS;
        assertThat(holds).containsExactly(h, 2 * h, 4 * h, 8 * h, 16 * h, 16 * h, 16 * h);
        assertThat(BatchPace.MAX_HOLD_EPOCHS).isEqualTo(16 * h);
        clock.run(clock.pace.holdEpochs(), 2.5, 5);
        clock.compare(10, 5);
        assertThat(clock.pace.alone()).as("batching became faster").isFalse();
        assertThat(clock.pace.holdEpochs())
                .as("a changed choice is held the shortest")
                .isEqualTo(h);
    }

    @Test
    void callsGoAloneWhenBatchingIsNotFasterByTwoPercent() {
        for (double batched : new double[] {5, 5.05, 4}) { // as fast, a 1 % gain within the noise, slower
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
        crowd(pace, CROWD);
        long now = 1;
        pace.completed(0, now);
        while (!pace.alone()) { // a comparison that finds calls alone twice as fast
            now += pace.alone() ? 1_000_000 : 2_000_000;
            epochEnds(pace, now);
        }
        for (int i = 1; i < BatchPace.EPOCH_CALLS; i++) {
            assertThat(slots.countAlone()).as("call " + i + " of an epoch").isFalse();
        }
        assertThat(slots.countAlone()).as("an epoch's worth").isTrue();
        assertThat(slots.uncountedAlone()).isEqualTo(BatchPace.EPOCH_CALLS);
        while (pace.alone()) { // the hold ends and the next comparison starts with a batching epoch
            now += 1_000_000;
            epochEnds(pace, now);
        }
        assertThat(slots.countAlone())
                .as("a call in flight when batching began: counted at once")
                .isTrue();
        assertThat(slots.uncountedAlone()).isEqualTo(1);
        now += 2_000_000;
        epochEnds(pace, now); // the batching epoch ends: alone again
        assertThat(pace.alone()).isTrue();
        for (int i = 1; i < BatchPace.EPOCH_CALLS; i++) {
            assertThat(slots.countAlone())
                    .as("call " + i + " of the next alone epoch")
                    .isFalse();
        }
        assertThat(slots.countAlone()).isTrue();
        assertThat(slots.uncountedAlone())
                .as("a whole epoch, not shortened by the straggler")
                .isEqualTo(BatchPace.EPOCH_CALLS);
    }

    @Test
    void whileCallsGoAloneACallFindingAStatementInFlightStartsItsOwnAtOnce() throws Exception {
        BatcherTest.Runner runner = new BatcherTest.Runner();
        BatchSlots slots = BatchSlots.adaptive();
        Batcher<String, String> batcher =
                new Batcher<>(slots, k -> k.substring(0, 1), LeaseBatches.CODE_POINT_ORDER, 4, 4, 64, runner);
        BatchPace pace = slots.pace;
        assertThat(pace).isNotNull();
        Clock clock = new Clock();
        crowd(pace, CROWD);
        slots.lock.lock();
        try { // batching measured slower: the same pace object, driven by the clock
            pace.completed(0, clock.now);
            while (!pace.alone() || Double.isNaN(pace.lastMedian())) {
                boolean alone = pace.alone();
                clock.now += alone ? 1_000_000 : 2_000_000;
                epochEnds(pace, clock.now);
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
