package dev.holdfast.pessimistic;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads that observe lock waits, shared by every {@link PessimisticLocks} of the JVM: a
 * timer that only schedules (it never borrows a connection), and at most
 * {@value #MAX_OBSERVATIONS} observers that read the database at once. All are daemons and end
 * after a minute idle, so an application that never waits long for a row lock holds no thread.
 */
final class BlockerThreads {

    /** Most observations running at once; one more finds its blockers unknown. */
    static final int MAX_OBSERVATIONS = 4;

    static final ScheduledExecutorService TIMER = timer();
    static final ExecutorService OBSERVERS = observers();

    private BlockerThreads() {}

    private static ScheduledExecutorService timer() {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, daemon("holdfast-blocker-timer"));
        timer.setRemoveOnCancelPolicy(true); // a lock that ends in time leaves nothing queued
        timer.setKeepAliveTime(60, TimeUnit.SECONDS);
        timer.allowCoreThreadTimeOut(true);
        return timer;
    }

    private static ExecutorService observers() {
        return new ThreadPoolExecutor(
                0,
                MAX_OBSERVATIONS,
                60,
                TimeUnit.SECONDS,
                new SynchronousQueue<>(),
                daemon("holdfast-blocker-observer"));
    }

    private static ThreadFactory daemon(String name) {
        AtomicInteger count = new AtomicInteger();
        return task -> {
            Thread t = new Thread(task, name + "-" + count.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
