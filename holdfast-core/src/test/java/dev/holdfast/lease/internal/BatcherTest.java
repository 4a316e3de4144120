package dev.holdfast.lease.internal;

import dev.holdfast.lease.LeaseBatchingTest;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** {@link Batcher} alone, with a runner the test controls: which calls go together, and when. */
class BatcherTest {

    /** Records each batch (its keys) and the thread that ran it; a batch containing a held key waits for its latch. */
    static final class Runner implements Batcher.Runner<String, String> {
        final List<List<String>> batches = new CopyOnWriteArrayList<>();
        final Map<String, CountDownLatch> held = new ConcurrentHashMap<>();
        final Map<String, CountDownLatch> started = new ConcurrentHashMap<>();
        final List<Boolean> interruptedWhileRunning = new CopyOnWriteArrayList<>();
        final List<Thread> ranOn = new CopyOnWriteArrayList<>();
        volatile Function<List<String>, List<Batcher.Outcome<String>>> outcomes = batch ->
                batch.stream().map(k -> Batcher.Outcome.of("done " + k)).toList();

        void hold(String key) {
            held.put(key, new CountDownLatch(1));
            started.put(key, new CountDownLatch(1));
        }

        void awaitStarted(String key) throws InterruptedException {
            assertThat(started.get(key).await(5, TimeUnit.SECONDS))
                    .as(key + " started")
                    .isTrue();
        }

        /** Submits {@code key} on a thread of its own and returns once its batch runs, held until released. */
        CompletableFuture<Object> startHeld(Batcher<String, String> batcher, String key) throws InterruptedException {
            hold(key);
            CompletableFuture<Object> running = submit(batcher, key);
            awaitStarted(key);
            return running;
        }

        @Override
        public List<Batcher.Outcome<String>> run(List<String> batch) {
            batches.add(List.copyOf(batch));
            interruptedWhileRunning.add(Thread.currentThread().isInterrupted());
            ranOn.add(Thread.currentThread());
            for (String key : batch) {
                CountDownLatch latch = held.get(key);
                if (latch != null) {
                    started.get(key).countDown();
                    try {
                        latch.await(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                }
            }
            return outcomes.apply(batch);
        }
    }

    private static CompletableFuture<Object> submit(Batcher<String, String> batcher, String key) {
        return LeaseBatchingTest.onItsOwnThread(() -> batcher.submit(key));
    }

    /** How long a test waits for something that takes microseconds, on a saturated machine. */
    private static final Duration AT_MOST = Duration.ofSeconds(30);

    /** Waits until {@code batcher} has {@code calls} calls queued. */
    private static void awaitQueued(Batcher<String, String> batcher, int calls, String what) {
        await(what)
                .atMost(AT_MOST)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(1))
                .until(() -> batcher.queued() == calls);
    }

    /**
     * Waits until {@code thread} is parked in {@code batcher} with no interrupt pending: its call waits
     * there, and stays waiting until something wakes it (an interrupted call has taken its interrupt
     * and parked again).
     */
    private static void awaitParked(Thread thread, Batcher<String, String> batcher, String what) {
        await(what)
                .atMost(AT_MOST)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(1))
                .until(() -> LockSupport.getBlocker(thread) == batcher
                        && !thread.isInterrupted()
                        && (thread.getState() == Thread.State.WAITING
                                || thread.getState() == Thread.State.TIMED_WAITING));
    }

    private static Batcher<String, String> batcher(Runner runner, int maxInFlight, int overlapAt) {
        return new Batcher<>(k -> k.substring(0, 1), LeaseBatches.CODE_POINT_ORDER, maxInFlight, overlapAt, 64, runner);
    }

    @Test
    void aLoneCallRunsAtOnceOnItsOwnThread() {
        List<String> threads = new ArrayList<>();
        Batcher<String, String> batcher = new Batcher<>(k -> k, LeaseBatches.CODE_POINT_ORDER, 1, 1, 64, batch -> {
            threads.add(Thread.currentThread().getName());
            return batch.stream().map(k -> Batcher.Outcome.of("done " + k)).toList();
        });
        assertThat(batcher.submit("a")).isEqualTo("done a");
        assertThat(threads).containsExactly(Thread.currentThread().getName());
    }

    @Test
    void callsQueuedWhileOneRunsGoTogetherSortedOnePerKey() throws Exception {
        Runner runner = new Runner();
        Batcher<String, String> batcher = batcher(runner, 1, 1);
        CompletableFuture<Object> first = runner.startHeld(batcher, "x");
        List<CompletableFuture<Object>> queued = new ArrayList<>();
        for (String key : List.of("c1", "a1", "c2", "b1")) { // c2 shares key "c" with c1
            queued.add(submit(batcher, key));
            awaitQueued(batcher, queued.size(), key + " queued");
        }
        runner.held.get("x").countDown();

        assertThat(first.get(5, TimeUnit.SECONDS)).isEqualTo("done x");
        for (CompletableFuture<Object> f : queued) {
            assertThat(f.get(5, TimeUnit.SECONDS)).asString().startsWith("done ");
        }
        assertThat(runner.batches).containsExactly(List.of("x"), List.of("a1", "b1", "c1"), List.of("c2"));
    }

    @Test
    void aCallWhoseKeyIsInFlightWaitsWhileOthersTakeTheFreeStatement() throws Exception {
        Runner runner = new Runner();
        Batcher<String, String> batcher = batcher(runner, 2, 1);
        CompletableFuture<Object> stuck = runner.startHeld(batcher, "a1");
        CompletableFuture<Object> sameKey = submit(batcher, "a2");
        awaitQueued(batcher, 1, "a2 queued");
        CompletableFuture<Object> other = submit(batcher, "b1");

        assertThat(other.get(5, TimeUnit.SECONDS))
                .as("the second statement is free for another key")
                .isEqualTo("done b1");
        assertThat(sameKey).as("waits for the statement of its key").isNotDone();
        assertThat(batcher.queued()).isEqualTo(1);
        runner.held.get("a1").countDown();
        assertThat(stuck.get(5, TimeUnit.SECONDS)).isEqualTo("done a1");
        assertThat(sameKey.get(5, TimeUnit.SECONDS)).isEqualTo("done a2");
        assertThat(runner.batches).containsExactly(List.of("a1"), List.of("b1"), List.of("a2"));
    }

    @Test
    void anotherStatementStartsWhileOneRunsOnlyOnceEnoughCallsQueue() throws Exception {
        Runner runner = new Runner();
        Batcher<String, String> batcher = batcher(runner, 4, 3);
        CompletableFuture<Object> first = runner.startHeld(batcher, "x");
        CompletableFuture<Object> a = submit(batcher, "a");
        CompletableFuture<Object> b = submit(batcher, "b");
        awaitQueued(batcher, 2, "two queued");
        assertThat(runner.batches).as("two queued calls wait").hasSize(1);
        CompletableFuture<Object> c = submit(batcher, "c");

        assertThat(a.get(5, TimeUnit.SECONDS)).isEqualTo("done a");
        assertThat(b.get(5, TimeUnit.SECONDS)).isEqualTo("done b");
        assertThat(c.get(5, TimeUnit.SECONDS)).isEqualTo("done c");
        assertThat(first).as("still held").isNotDone();
        assertThat(runner.batches).containsExactly(List.of("x"), List.of("a", "b", "c"));
        runner.held.get("x").countDown();
        assertThat(first.get(5, TimeUnit.SECONDS)).isEqualTo("done x");
    }

    @Test
    void aBatchThatFailsFailsEveryCallInItAndTheNextBatchRuns() throws Exception {
        Runner runner = new Runner();
        Batcher<String, String> batcher = batcher(runner, 1, 1);
        runner.outcomes = batch -> {
            throw new OutOfMemoryError("simulated");
        };
        assertThatThrownBy(() -> batcher.submit("a")).isInstanceOf(OutOfMemoryError.class);
        runner.outcomes = batch -> List.of();
        assertThatThrownBy(() -> batcher.submit("b"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no outcome for every call");
        runner.outcomes = batch -> java.util.Collections.singletonList(null);
        assertThatThrownBy(() -> batcher.submit("c")).isInstanceOf(IllegalStateException.class);
        runner.outcomes = batch ->
                batch.stream().map(k -> Batcher.Outcome.of("done " + k)).toList();
        assertThat(batcher.submit("d")).isEqualTo("done d");
        assertThat(batcher.queued()).isZero();
    }

    @Test
    void anInterruptedCallerRunsItsBatchUninterruptedAndKeepsItsInterrupt() {
        Runner runner = new Runner();
        Batcher<String, String> batcher = batcher(runner, 1, 1);
        Thread.currentThread().interrupt();
        try {
            assertThat(batcher.submit("a")).isEqualTo("done a");
            assertThat(Thread.currentThread().isInterrupted())
                    .as("the interrupt is kept")
                    .isTrue();
        } finally {
            Thread.interrupted();
        }
        assertThat(runner.interruptedWhileRunning).containsExactly(false);
    }

    @Test
    void aCallInterruptedWhileItsBatchRunsElsewhereGetsItsOutcomeKeepsItsInterruptAndDoesNotSpin() throws Exception {
        Runner runner = new Runner();
        Batcher<String, String> batcher = batcher(runner, 1, 1);
        CompletableFuture<Object> first = runner.startHeld(batcher, "a");
        Interrupted waiter = Interrupted.whileQueued(batcher, "b");
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        awaitParked(waiter.thread(), batcher, "b took its interrupt and waits again");
        long cpuBefore = threads.getThreadCpuTime(waiter.thread().getId());
        Thread.sleep(500); // the time over which a spinning wait would burn CPU
        long cpuWhileWaiting = threads.getThreadCpuTime(waiter.thread().getId()) - cpuBefore;
        assertThat(waiter.interruptKept()).as("still waits for its batch").isNotDone();
        assertThat(cpuWhileWaiting)
                .as("waits again after the interrupt (a spinning wait burns the 500 ms)")
                .isLessThan(TimeUnit.MILLISECONDS.toNanos(100));
        runner.held.get("a").countDown();
        assertThat(first.get(5, TimeUnit.SECONDS)).isEqualTo("done a");
        assertThat(waiter.interruptKept().get(5, TimeUnit.SECONDS))
                .as("the interrupt is kept")
                .isTrue();
        assertThat(runner.batches).containsExactly(List.of("a"), List.of("b"));
    }

    /** A thread whose call of {@code key} is interrupted once queued; completes with whether its interrupt was kept. */
    record Interrupted(Thread thread, CompletableFuture<Boolean> interruptKept) {

        static Interrupted whileQueued(Batcher<String, String> batcher, String key) throws InterruptedException {
            CompletableFuture<Boolean> interruptKept = new CompletableFuture<>();
            Thread thread = new Thread(() -> {
                batcher.submit(key);
                interruptKept.complete(Thread.currentThread().isInterrupted());
            });
            thread.start();
            awaitQueued(batcher, 1, key + " queued");
            thread.interrupt();
            return new Interrupted(thread, interruptKept);
        }
    }

    /** A thread of its own that makes the calls it is given, one after another, as a worker holding leases does. */
    static final class Worker implements AutoCloseable {
        final java.util.concurrent.ExecutorService thread = java.util.concurrent.Executors.newSingleThreadExecutor();

        CompletableFuture<String> submit(Batcher<String, String> batcher, String key) {
            return CompletableFuture.supplyAsync(() -> batcher.submit(key), thread);
        }

        @Override
        public void close() {
            thread.shutdownNow();
        }
    }

    private static Batcher<String, String> member(BatchSlots slots, Runner runner) {
        return new Batcher<>(slots, k -> k.substring(0, 1), LeaseBatches.CODE_POINT_ORDER, 1, 1, 64, runner);
    }

    private static Thread threadOf(Worker worker) throws Exception {
        return worker.thread.submit(Thread::currentThread).get(5, TimeUnit.SECONDS);
    }

    private static Map<Thread, Long> expected(BatchSlots slots) {
        return slots.expected();
    }

    @Test
    void slotsAreOneBatchersOwn() {
        BatchSlots slots = new BatchSlots();
        member(slots, new Runner());
        assertThatThrownBy(() -> member(slots, new Runner()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("slots of its own");
        BatchSlots adaptive = BatchSlots.adaptive();
        member(adaptive, new Runner());
        member(adaptive.following(), new Runner()); // the releases' slots follow the acquires' pace: their own
    }

    /**
     * Adaptive: a thread is waited for only if it came back within the window the last time, and the
     * window is half the measured statement time, or an eighth of the threads' measured cycle if shorter.
     */
    @Test
    void adaptivelyAThreadIsWaitedForOnlyIfItCameBackWithinAFractionOfTheStatementAndCycleTimes() {
        BatchSlots slots = BatchSlots.adaptive();
        member(slots, new Runner());
        Thread quick = new Thread(() -> {});
        Thread late = new Thread(() -> {});
        long ms = TimeUnit.MILLISECONDS.toNanos(1);
        slots.lock.lock();
        try {
            long now = System.nanoTime();
            assertThat(slots.window())
                    .as("no statement measured yet: nobody is waited for")
                    .isZero();
            slots.ran(10 * ms);
            assertThat(slots.window()).as("half a statement").isEqualTo(5 * ms);
            for (Thread t : List.of(quick, late)) {
                slots.answered(t, BatchSlots.ELSEWHERE, now);
            }
            assertThat(slots.expected())
                    .as("how soon they come back is not known yet")
                    .isEmpty();
            slots.arrived(quick, now + ms); // 1 ms after its release: within the 5 ms
            slots.arrived(late, now + 6 * ms); // 6 ms: later than the window
            slots.answered(quick, BatchSlots.ELSEWHERE, now + 10 * ms);
            slots.answered(late, BatchSlots.ELSEWHERE, now + 10 * ms);
            assertThat(slots.expected())
                    .as("only the thread that came back in time")
                    .containsOnlyKeys(quick)
                    .containsEntry(quick, now + 15 * ms);

            slots.arrived(quick, now + 11 * ms); // its cycle: 10 ms from one arrival to the next
            assertThat(slots.window())
                    .as("an eighth of the 10 ms cycle is less than half the statement")
                    .isEqualTo(10 * ms / 8);
            slots.answered(quick, BatchSlots.ELSEWHERE, now + 20 * ms);
            assertThat(slots.expected())
                    .as("came back 1 ms after: within 1.25 ms")
                    .containsEntry(quick, now + 20 * ms + 10 * ms / 8);
        } finally {
            slots.lock.unlock();
        }
    }

    /**
     * Adaptive: a wait that did not pay stops all waiting at once and for a number of batches after the
     * one that gave up, doubling with each such wait up to 64, halving with each wait that paid.
     */
    @Test
    void adaptivelyAWaitThatDidNotPayStopsWaitingForBatchesThatDoubleAndHalve() {
        BatchSlots slots = BatchSlots.adaptive();
        member(slots, new Runner());
        Thread quick = new Thread(() -> {});
        long ms = TimeUnit.MILLISECONDS.toNanos(1);
        slots.lock.lock();
        try {
            long now = System.nanoTime();
            slots.ran(10 * ms);
            slots.answered(quick, BatchSlots.ELSEWHERE, now);
            slots.arrived(quick, now);
            slots.answered(quick, BatchSlots.ELSEWHERE, now);
            assertThat(slots.expected()).containsOnlyKeys(quick);

            List<Integer> quiet = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                quiet.add(batchesWithoutWaitingAfterALoss(slots));
                assertThat(slots.expected()).as("given up at once").isEmpty();
            }
            assertThat(quiet).containsExactly(1, 2, 4, 8, 16, 32, 64, 64);
            slots.lingered(true);
            assertThat(batchesWithoutWaitingAfterALoss(slots))
                    .as("a wait that paid halved it")
                    .isEqualTo(32);
            assertThat(slots.window()).isEqualTo(5 * ms);
        } finally {
            slots.lock.unlock();
        }
    }

    /** A wait ran out; how many batches after the one it starts go without waiting. Holds the lock. */
    private static int batchesWithoutWaitingAfterALoss(BatchSlots slots) {
        slots.lingered(false);
        slots.lingered(false); // a second call that gave up at the same time: counted once
        assertThat(slots.window()).isZero();
        slots.started(); // the batch of the call that gave up
        int batches = 0;
        while (slots.window() == 0 && batches < 1000) {
            slots.started();
            batches++;
        }
        return batches;
    }

    /**
     * Adaptive, end to end: a call waits for the thread whose release (answered elsewhere) came back at
     * once before, and goes with that thread's next acquire in one statement; when the thread does not
     * come back, the call waits at most the window, and the next batch does not wait at all.
     */
    @Test
    void adaptivelyACallWaitsForAThreadBackFromItsReleaseAndStopsWaitingWhenItDoesNotCome() throws Exception {
        Runner runner = new Runner();
        BatchSlots slots = BatchSlots.adaptive();
        Batcher<String, String> batcher = member(slots, runner);
        measured(slots, TimeUnit.SECONDS.toNanos(60)); // a window of 30 s: nothing below depends on timing
        try (Worker one = new Worker();
                Worker two = new Worker()) {
            Thread first = threadOf(one);
            one.thread.submit(batcher::answeredElsewhere).get(5, TimeUnit.SECONDS);
            assertThat(one.submit(batcher, "a0").get(5, TimeUnit.SECONDS))
                    .as("came back at once")
                    .isEqualTo("done a0");
            one.thread.submit(batcher::answeredElsewhere).get(5, TimeUnit.SECONDS);
            assertThat(expected(slots)).as("waited for after its release").containsOnlyKeys(first);

            Thread other = threadOf(two);
            CompletableFuture<String> waiting = two.submit(batcher, "b1");
            awaitQueued(batcher, 1, "b1 queued");
            awaitParked(other, batcher, "b1 waits for the thread back from its release");
            CompletableFuture<String> next = one.submit(batcher, "c1");
            assertThat(waiting.get(5, TimeUnit.SECONDS)).isEqualTo("done b1");
            assertThat(next.get(5, TimeUnit.SECONDS)).isEqualTo("done c1");
            assertThat(runner.batches)
                    .as("the two calls in one statement")
                    .last()
                    .isEqualTo(List.of("b1", "c1"));
        }

        Runner second = new Runner();
        BatchSlots shortWindow = BatchSlots.adaptive();
        Batcher<String, String> lonely = member(shortWindow, second);
        measured(shortWindow, TimeUnit.SECONDS.toNanos(2)); // a window of about 1 s
        try (Worker gone = new Worker();
                Worker two = new Worker()) {
            gone.thread.submit(lonely::answeredElsewhere).get(5, TimeUnit.SECONDS);
            assertThat(gone.submit(lonely, "a0").get(5, TimeUnit.SECONDS)).isEqualTo("done a0");
            gone.thread.submit(lonely::answeredElsewhere).get(5, TimeUnit.SECONDS);
            assertThat(expected(shortWindow)).containsOnlyKeys(threadOf(gone));

            assertThat(two.submit(lonely, "b1").get(10, TimeUnit.SECONDS))
                    .as("given up at the window's end")
                    .isEqualTo("done b1");
            long lingered = lonely.lingeredNanos();
            assertThat(lingered).isPositive();
            gone.thread.submit(lonely::answeredElsewhere).get(5, TimeUnit.SECONDS);
            assertThat(expected(shortWindow))
                    .as("after a wait that did not pay: nobody is waited for")
                    .isEmpty();
            assertThat(two.submit(lonely, "b2").get(10, TimeUnit.SECONDS)).isEqualTo("done b2");
            assertThat(lonely.lingeredNanos()).as("the next batch did not wait").isEqualTo(lingered);
            assertThat(second.batches).containsExactly(List.of("a0"), List.of("b1"), List.of("b2"));
        }
    }

    /**
     * Adaptive slots with a window of 30 s (statements measured at 60 s, no cycle measured yet) in which
     * {@code one} is waited for: its release, answered elsewhere, came back at once, and it was
     * released again. Nothing that uses them depends on timing.
     */
    private static BatchSlots waitingFor(Worker one, Batcher<String, String> batcher, BatchSlots slots)
            throws Exception {
        measured(slots, TimeUnit.SECONDS.toNanos(60));
        one.thread.submit(batcher::answeredElsewhere).get(5, TimeUnit.SECONDS);
        assertThat(one.submit(batcher, "a0").get(5, TimeUnit.SECONDS))
                .as("came back at once")
                .isEqualTo("done a0");
        one.thread.submit(batcher::answeredElsewhere).get(5, TimeUnit.SECONDS);
        assertThat(expected(slots)).as("waited for after its release").containsOnlyKeys(threadOf(one));
        return slots;
    }

    @Test
    void adaptivelyAThreadAloneNeverWaitsForItself() throws Exception {
        Runner runner = new Runner();
        BatchSlots slots = BatchSlots.adaptive();
        Batcher<String, String> batcher = member(slots, runner);
        try (Worker one = new Worker()) {
            waitingFor(one, batcher, slots);
            assertThat(one.submit(batcher, "b").get(5, TimeUnit.SECONDS))
                    .as("far within the 30 s window")
                    .isEqualTo("done b");
        }
        assertThat(batcher.lingeredNanos()).as("nobody lingered").isZero();
        assertThat(runner.batches).containsExactly(List.of("a0"), List.of("b"));
    }

    @Test
    void adaptivelyAnInterruptedWaitingCallStillWaitsAndKeepsItsInterrupt() throws Exception {
        Runner runner = new Runner();
        BatchSlots slots = BatchSlots.adaptive();
        Batcher<String, String> batcher = member(slots, runner);
        try (Worker one = new Worker()) {
            waitingFor(one, batcher, slots);
            Interrupted waiter = Interrupted.whileQueued(batcher, "b1");
            awaitParked(waiter.thread(), batcher, "b1 took its interrupt and waits again");
            assertThat(waiter.interruptKept())
                    .as("still waits for the expected thread")
                    .isNotDone();
            assertThat(one.submit(batcher, "c1").get(5, TimeUnit.SECONDS)).isEqualTo("done c1");
            assertThat(waiter.interruptKept().get(5, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(runner.batches).containsExactly(List.of("a0"), List.of("b1", "c1"));
    }

    @Test
    void adaptivelyTheArrivalThatEndsTheWaitRunsTheBatchItselfWithoutWakingTheWaitingCall() throws Exception {
        Runner runner = new Runner();
        BatchSlots slots = BatchSlots.adaptive();
        Batcher<String, String> batcher = member(slots, runner);
        try (Worker one = new Worker();
                Worker two = new Worker()) {
            waitingFor(one, batcher, slots);
            CompletableFuture<String> waiting = two.submit(batcher, "b1");
            awaitQueued(batcher, 1, "b1 queued");
            CompletableFuture<String> last = one.submit(batcher, "c1");
            assertThat(last.get(5, TimeUnit.SECONDS)).isEqualTo("done c1");
            assertThat(waiting.get(5, TimeUnit.SECONDS)).isEqualTo("done b1");
            assertThat(runner.batches).last().isEqualTo(List.of("b1", "c1"));
            assertThat(runner.ranOn)
                    .as("run on the thread of the arrival that ended the wait, not handed to the"
                            + " waiting call's (a thread switch before every statement)")
                    .last()
                    .isEqualTo(threadOf(one));
        }
    }

    @Test
    void adaptivelyOnlyAnArrivalThatEndsTheWaitSoonerWakesTheWaitingCalls() {
        BatchSlots slots = BatchSlots.adaptive();
        member(slots, new Runner());
        Thread one = new Thread(() -> {});
        Thread two = new Thread(() -> {});
        Thread three = new Thread(() -> {});
        slots.lock.lock();
        try {
            long now = System.nanoTime();
            slots.ran(TimeUnit.SECONDS.toNanos(60)); // a window of 30 s; every arrival below at one instant: no cycle
            for (Thread t : List.of(one, two, three)) { // each came back at once the first time: waited for since
                slots.answered(t, BatchSlots.BATCH, now);
                slots.arrived(t, now);
                slots.answered(t, BatchSlots.BATCH, now);
            }
            assertThat(slots.arrived(one, now))
                    .as("two and three are waited for as long")
                    .isFalse();
            slots.answered(one, BatchSlots.BATCH, now + TimeUnit.SECONDS.toNanos(1));
            assertThat(slots.arrived(two, now)).as("one is waited for longer").isFalse();
            assertThat(slots.arrived(one, now))
                    .as("the longest wait ends: three's ends sooner")
                    .isTrue();
            assertThat(slots.arrived(three, now)).as("the last one waited for").isTrue();
            assertThat(slots.arrived(three, now)).as("not waited for").isFalse();
            assertThat(slots.lingerLeft()).isZero();
        } finally {
            slots.lock.unlock();
        }
    }

    @Test
    void adaptivelyAThreadThatWorksBetweenItsCallsIsNotWaitedFor() throws Exception {
        Runner runner = new Runner();
        BatchSlots slots = BatchSlots.adaptive();
        Batcher<String, String> batcher = member(slots, runner);
        measured(slots, TimeUnit.SECONDS.toNanos(2)); // a window of 1 s at most
        try (Worker one = new Worker()) {
            one.thread.submit(batcher::answeredElsewhere).get(5, TimeUnit.SECONDS);
            assertThat(one.submit(batcher, "a0").get(5, TimeUnit.SECONDS)).isEqualTo("done a0");
            one.thread.submit(batcher::answeredElsewhere).get(5, TimeUnit.SECONDS);
            assertThat(expected(slots))
                    .as("came back within the window: waited for")
                    .containsOnlyKeys(threadOf(one));
            Thread.sleep(1500); // works under its lease longer than the window
            assertThat(one.submit(batcher, "a1").get(5, TimeUnit.SECONDS)).isEqualTo("done a1");
            one.thread.submit(batcher::answeredElsewhere).get(5, TimeUnit.SECONDS);
            assertThat(expected(slots))
                    .as("came back later than the window: nobody waits for it")
                    .isEmpty();
        }
    }

    /** Slots that measured statements of {@code nanos}. */
    private static void measured(BatchSlots slots, long nanos) {
        slots.lock.lock();
        try {
            slots.ran(nanos);
        } finally {
            slots.lock.unlock();
        }
    }

    @Test
    void batchesAreInCodePointOrderAsMariaDbsBinaryCollation() {
        String privateUse = "\uE000";
        String emoji = new String(Character.toChars(0x1F600));
        assertThat(privateUse.compareTo(emoji))
                .as("String order: by UTF-16 unit")
                .isPositive();
        assertThat(LeaseBatches.CODE_POINT_ORDER.compare(privateUse, emoji))
                .as("by code point")
                .isNegative();
        assertThat(LeaseBatches.CODE_POINT_ORDER.compare("ab", "abc")).isNegative();
        assertThat(LeaseBatches.CODE_POINT_ORDER.compare("abc", "abc")).isZero();
        assertThat(LeaseBatches.CODE_POINT_ORDER.compare("b", "abc")).isPositive();
    }
}
