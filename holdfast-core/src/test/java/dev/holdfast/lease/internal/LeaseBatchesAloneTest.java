package dev.holdfast.lease.internal;

import dev.holdfast.jdbc.dialect.Dialect;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Adaptive batching while it measured calls alone as faster: each call runs on its caller's thread,
 * past the batchers and their lock, as without batching, and is still counted.
 */
class LeaseBatchesAloneTest {

    /** A data source that no call here may use: alone, calls run the functions they were given. */
    private static final DataSource NO_DATABASE = (DataSource) Proxy.newProxyInstance(
            LeaseBatchesAloneTest.class.getClassLoader(), new Class<?>[] {DataSource.class}, (p, m, a) -> {
                throw new AssertionError("a call alone used the batch statements: " + m.getName());
            });

    private static final LeaseStore JDBC = LeaseStores.forDialect(Dialect.POSTGRESQL, "leases");

    @Test
    void whileCallsGoAloneEachRunsOnItsCallersThreadPastTheBatchersLockAndIsCounted() throws Exception {
        List<Thread> ranOn = new CopyOnWriteArrayList<>();
        LeaseBatches batches = new LeaseBatches(
                NO_DATABASE,
                JDBC,
                new LeaseCalls(NO_DATABASE, Dialect.POSTGRESQL, JDBC).races(),
                true,
                4,
                4,
                BatchMode.ADAPTIVE,
                a -> {
                    ranOn.add(Thread.currentThread());
                    return Optional.of(
                            new LeaseRow(a.name(), a.owner(), 7, Instant.EPOCH, Instant.EPOCH.plusSeconds(1)));
                },
                r -> {
                    ranOn.add(Thread.currentThread());
                    return true;
                });
        BatchSlots slots = batches.acquireSlots();
        BatchPace pace = slots.pace;
        assertThat(pace).isNotNull();
        slots.lock.lock();
        try { // batching measured twice as slow as calls alone
            BatchPaceTest.Clock clock = new BatchPaceTest.Clock();
            int crowd = BatchPaceTest.crowd(pace, BatchPaceTest.CROWD);
            pace.completed(0, clock.now);
            while (!pace.alone() || pace.comparing()) {
                clock.now += pace.alone() ? 1_000_000 : 2_000_000;
                BatchPaceTest.epochEnds(pace, clock.now);
            }
            assertThat(pace.lastMedian()).as("measured").isCloseTo(2.0, org.assertj.core.api.Assertions.within(1e-9));
            BatchPaceTest.leave(pace, crowd);
        } finally {
            slots.lock.unlock();
        }

        CountDownLatch locked = new CountDownLatch(1);
        CountDownLatch unlock = new CountDownLatch(1);
        Thread holder = new Thread(
                () -> { // holds the batchers' lock: a call alone must not need it
                    slots.lock.lock();
                    try {
                        locked.countDown();
                        unlock.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        slots.lock.unlock();
                    }
                },
                "test-lock-holder");
        holder.start();
        assertThat(locked.await(10, TimeUnit.SECONDS)).isTrue();
        try {
            CompletableFuture<Thread> caller = CompletableFuture.supplyAsync(() -> {
                LeaseRow row = batches.acquire("a", "me", 1_000_000).orElseThrow();
                assertThat(batches.release(row.name(), row.owner(), row.token()))
                        .isTrue();
                return Thread.currentThread();
            });
            Thread callerThread = caller.get(10, TimeUnit.SECONDS);
            assertThat(ranOn).as("both calls ran on the caller's thread").containsExactly(callerThread, callerThread);
        } finally {
            unlock.countDown();
            holder.join(10_000);
        }
        assertThat(batches.counts())
                .as("acquire calls, statements, release calls, statements, linger")
                .containsExactly(1, 1, 1, 1, 0);
        assertThat(batches.multiRowStatements()).isZero();
        assertThat(batches.queued()).isZero();
    }

    @Test
    void callsAloneCountForThePaceInEpochs() {
        LeaseBatches batches = new LeaseBatches(
                NO_DATABASE,
                JDBC,
                new LeaseCalls(NO_DATABASE, Dialect.POSTGRESQL, JDBC).races(),
                true,
                4,
                4,
                BatchMode.ADAPTIVE,
                a -> Optional.empty(),
                r -> false);
        BatchSlots slots = batches.acquireSlots();
        BatchPace pace = slots.pace;
        assertThat(pace).isNotNull();
        BatchPaceTest.crowd(pace, BatchPaceTest.CROWD); // calls of other threads, in flight: each call here finds them
        slots.lock.lock();
        try { // the comparison's second epoch (alone) is running: the first pair's batching epoch is done
            pace.completed(0, 1);
            BatchPaceTest.epochEnds(pace, 2_000_000);
            assertThat(pace.alone()).isTrue();
            assertThat(pace.comparing()).isTrue();
        } finally {
            slots.lock.unlock();
        }
        // Epoch 1 (pair 0's second) and epoch 2 (pair 1 starts alone) go alone; epoch 3 batches.
        for (int i = 0; i < 2 * BatchPace.EPOCH_CALLS - 1; i++) {
            assertThat(batches.acquire("a", "me", 1_000)).isEmpty();
            assertThat(pace.alone())
                    .as("two epochs alone are not over before their 128th call")
                    .isTrue();
        }
        assertThat(batches.acquire("a", "me", 1_000)).isEmpty();
        assertThat(pace.alone())
                .as("the 128th call alone ended the second epoch: the next one batches")
                .isFalse();
        assertThat(pace.lastOverlap()).as("each found the three others").isEqualTo(3.0);
    }

    /**
     * Calls of one thread never overlap: after the first epoch (which batches, as every service starts)
     * they go alone, and no comparison ever runs again.
     */
    @Test
    void callsThatNeverOverlapGoAloneWithoutComparisons() {
        LeaseBatches batches = new LeaseBatches(
                NO_DATABASE,
                JDBC,
                new LeaseCalls(NO_DATABASE, Dialect.POSTGRESQL, JDBC).races(),
                true,
                4,
                4,
                BatchMode.ADAPTIVE,
                a -> Optional.empty(),
                r -> false);
        BatchPace pace = batches.acquireSlots().pace;
        assertThat(pace).isNotNull();
        assertThat(pace.alone()).as("a new service batches its first epoch").isFalse();
        for (int i = 0; i < 1000 * BatchPace.EPOCH_CALLS; i++) {
            assertThat(batches.acquire("a", "me", 1_000)).isEmpty();
            if (i >= BatchPace.EPOCH_CALLS - 1) {
                assertThat(pace.alone()).as("call " + i).isTrue();
            }
        }
        assertThat(pace.comparing()).isFalse();
        assertThat(pace.lastMedian()).as("never compared").isNaN();
        assertThat(pace.lastOverlap()).isZero();
        assertThat(batches.counts())
                .as("every call alone: one statement each")
                .containsExactly(1000 * BatchPace.EPOCH_CALLS, 1000 * BatchPace.EPOCH_CALLS, 0, 0, 0);
    }

    /** The pace counts as overlapping the calls of other threads in flight, alone or in a batch, when a call arrives. */
    @Test
    void thePaceCountsTheAcquiresInFlightThatEachAcquireFinds() throws Exception {
        CountDownLatch inside = new CountDownLatch(3);
        CountDownLatch open = new CountDownLatch(1);
        LeaseBatches batches = new LeaseBatches(
                NO_DATABASE,
                JDBC,
                new LeaseCalls(NO_DATABASE, Dialect.POSTGRESQL, JDBC).races(),
                true,
                4,
                4,
                BatchMode.ADAPTIVE,
                a -> {
                    if (a.name().startsWith("slow")) {
                        inside.countDown();
                        try {
                            open.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    return Optional.empty();
                },
                r -> false);
        BatchPace pace = batches.acquireSlots().pace;
        assertThat(pace).isNotNull();
        for (int i = 0; i < BatchPace.EPOCH_CALLS; i++) { // the first epoch: alone after it, as nothing overlapped
            batches.acquire("a", "me", 1_000);
        }
        assertThat(pace.alone()).isTrue();
        ExecutorService callers = Executors.newFixedThreadPool(3);
        try {
            List<Future<Optional<LeaseRow>>> slow = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                String name = "slow-" + i;
                slow.add(callers.submit(() -> batches.acquire(name, "me", 1_000)));
            }
            assertThat(inside.await(10, TimeUnit.SECONDS))
                    .as("three calls in flight")
                    .isTrue();
            for (int i = 0; i < BatchPace.EPOCH_CALLS; i++) {
                batches.acquire("a", "me", 1_000);
            }
            assertThat(pace.lastOverlap())
                    .as("the three found 0, 1 and 2; the epoch's 64 calls found 3 each")
                    .isEqualTo((0 + 1 + 2 + 3.0 * BatchPace.EPOCH_CALLS) / (3 + BatchPace.EPOCH_CALLS));
            assertThat(pace.comparing())
                    .as("crowded, but alone for a hold after the first epoch found nobody")
                    .isFalse();
            open.countDown();
            for (Future<Optional<LeaseRow>> call : slow) {
                assertThat(call.get(10, TimeUnit.SECONDS)).isEmpty();
            }
        } finally {
            open.countDown();
            callers.shutdownNow();
        }
    }
}
