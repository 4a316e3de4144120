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
                boolean alone = pace.alone();
                modes.add(alone);
                now += (long) (BatchPace.EPOCH_CALLS / (alone ? alonePerMs : batchedPerMs) * 1_000_000);
                pace.completed(BatchPace.EPOCH_CALLS, now);
            }
            return modes;
        }
    }

    @Test
    void itComparesBothModesInPairsOfAlternatingOrderThenHoldsTheFasterThenComparesAgain() {
        Clock clock = new Clock();
        List<Boolean> comparing = clock.run(2 * BatchPace.PAIRS, 10, 5);
        assertThat(comparing.subList(0, 8)).as("pairs: batched first, then alone first")
                .containsExactly(false, true, true, false, false, true, true, false);
        assertThat(comparing.stream().filter(a -> a)).as("half the epochs alone").hasSize(BatchPace.PAIRS);
        assertThat(clock.pace.lastMedian()).isCloseTo(0.5, within(1e-9));
        assertThat(clock.run(BatchPace.HOLD_EPOCHS, 10, 5)).as("batching, twice as fast, is held").containsOnly(false);
        assertThat(clock.run(2, 10, 5)).as("then compared again").containsExactly(false, true);
    }

    @Test
    void callsGoAloneWhenBatchingIsNotFasterByTwoPercent() {
        for (double batched : new double[] {5, 5.05}) {  // slower, and a 1 % gain within the noise
            Clock clock = new Clock();
            clock.run(2 * BatchPace.PAIRS, batched, 5.0 * (batched == 5 ? 1.2 : 1));
            assertThat(clock.pace.alone()).as("batching at " + batched).isTrue();
            assertThat(clock.run(BatchPace.HOLD_EPOCHS, batched, 5)).containsOnly(true);
        }
    }

    @Test
    void aChangeOfWorkloadIsFollowedAtTheNextComparison() {
        Clock clock = new Clock();
        clock.run(2 * BatchPace.PAIRS + BatchPace.HOLD_EPOCHS, 10, 5);
        assertThat(clock.pace.alone()).isFalse();
        clock.run(2 * BatchPace.PAIRS, 4, 5);
        assertThat(clock.pace.alone()).as("batching became slower").isTrue();
        assertThat(clock.pace.lastMedian()).isCloseTo(1.25, within(1e-9));
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
