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
