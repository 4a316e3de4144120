package dev.holdfast.lease.internal;

import dev.holdfast.jdbc.dialect.Dialect;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
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

    @Test
    void whileCallsGoAloneEachRunsOnItsCallersThreadPastTheBatchersLockAndIsCounted() throws Exception {
        List<Thread> ranOn = new CopyOnWriteArrayList<>();
        LeaseJdbc jdbc = new LeaseJdbc(LeaseSqls.forDialect(Dialect.POSTGRESQL, "leases"));
        LeaseBatches batches = new LeaseBatches(NO_DATABASE, jdbc,
                new LeaseCalls(NO_DATABASE, Dialect.POSTGRESQL, jdbc).races(), true, 4, 4, 4, 4, LeaseSettings.ADAPTIVE,
                a -> {
                    ranOn.add(Thread.currentThread());
                    return Optional.of(new LeaseRow(a.name(), a.owner(), 7, Instant.EPOCH, Instant.EPOCH.plusSeconds(1)));
                }, r -> {
                    ranOn.add(Thread.currentThread());
                    return true;
                });
        BatchSlots slots = batches.acquireSlots();
        BatchPace pace = slots.pace;
        assertThat(pace).isNotNull();
        slots.lock.lock();
        try { // batching measured twice as slow as calls alone
            BatchPaceTest.Clock clock = new BatchPaceTest.Clock();
            pace.completed(0, clock.now);
            while (!pace.alone() || pace.comparing()) {
                clock.now += pace.alone() ? 1_000_000 : 2_000_000;
                pace.completed(BatchPace.EPOCH_CALLS, clock.now);
            }
        } finally {
            slots.lock.unlock();
        }

        CountDownLatch locked = new CountDownLatch(1);
        CountDownLatch unlock = new CountDownLatch(1);
        Thread holder = new Thread(() -> { // holds the batchers' lock: a call alone must not need it
            slots.lock.lock();
            try {
                locked.countDown();
                unlock.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                slots.lock.unlock();
            }
        }, "test-lock-holder");
        holder.start();
        assertThat(locked.await(10, TimeUnit.SECONDS)).isTrue();
        try {
            CompletableFuture<Thread> caller = CompletableFuture.supplyAsync(() -> {
                LeaseRow row = batches.acquire("a", "me", 1_000_000).orElseThrow();
                assertThat(batches.release(row.name(), row.owner(), row.token())).isTrue();
                return Thread.currentThread();
            });
            Thread callerThread = caller.get(10, TimeUnit.SECONDS);
            assertThat(ranOn).as("both calls ran on the caller's thread").containsExactly(callerThread, callerThread);
        } finally {
            unlock.countDown();
            holder.join(10_000);
        }
        assertThat(batches.counts()).as("acquire calls, statements, release calls, statements, linger")
                .containsExactly(1, 1, 1, 1, 0);
        assertThat(batches.multiRowStatements()).isZero();
        assertThat(batches.queued()).isZero();
    }

    @Test
    void callsAloneCountForThePaceInEpochs() {
        LeaseJdbc jdbc = new LeaseJdbc(LeaseSqls.forDialect(Dialect.POSTGRESQL, "leases"));
        LeaseBatches batches = new LeaseBatches(NO_DATABASE, jdbc,
                new LeaseCalls(NO_DATABASE, Dialect.POSTGRESQL, jdbc).races(), true, 4, 4, 4, 4, LeaseSettings.ADAPTIVE,
                a -> Optional.empty(), r -> false);
        BatchSlots slots = batches.acquireSlots();
        BatchPace pace = slots.pace;
        assertThat(pace).isNotNull();
        slots.lock.lock();
        try { // the comparison's second epoch (alone) is running: the first pair's batching epoch is done
            pace.completed(0, 1);
            pace.completed(BatchPace.EPOCH_CALLS, 2_000_000);
            assertThat(pace.alone()).isTrue();
        } finally {
            slots.lock.unlock();
        }
        // Epoch 1 (pair 0's second) and epoch 2 (pair 1 starts alone) go alone; epoch 3 batches.
        for (int i = 0; i < 2 * BatchPace.EPOCH_CALLS - 1; i++) {
            assertThat(batches.acquire("a", "me", 1_000)).isEmpty();
            assertThat(pace.alone()).as("two epochs alone are not over before their 128th call").isTrue();
        }
        assertThat(batches.acquire("a", "me", 1_000)).isEmpty();
        assertThat(pace.alone()).as("the 128th call alone ended the second epoch: the next one batches").isFalse();
    }
}
