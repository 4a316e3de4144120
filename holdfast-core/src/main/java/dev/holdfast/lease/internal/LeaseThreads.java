package dev.holdfast.lease.internal;

import org.jspecify.annotations.Nullable;

import java.time.Instant;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The two thread pools of leases, each started at its first use: a timer that never does I/O and
 * background threads for everything that may block. After {@link #close()} neither starts again.
 */
public final class LeaseThreads implements AutoCloseable {

    /** For guards of leases that bring no threads of their own ({@code Leases#keepAlive}'s default). */
    public static final LeaseThreads SHARED = new LeaseThreads("shared");

    private final String suffix;
    private final AtomicLong losses = new AtomicLong();
    private volatile @Nullable String lastLoss;
    private volatile @Nullable Instant lastLossAt;
    private volatile @Nullable ScheduledExecutorService timer;
    private volatile @Nullable ExecutorService background;
    private volatile boolean closed;

    LeaseThreads(String suffix) {
        this.suffix = suffix;
    }

    /** Records that a guard on these threads lost its lease ({@code why}: the loss's message), for health reports. */
    public void lost(String why) {
        lastLoss = why;
        lastLossAt = Instant.now();
        losses.incrementAndGet();
    }

    /** How many guards on these threads lost their lease since they were made. */
    public long losses() {
        return losses.get();
    }

    /** The message of the latest loss, or null if none. */
    public @Nullable String lastLoss() {
        return lastLoss;
    }

    /** When the latest loss was found (this JVM's clock), or null if none. */
    public @Nullable Instant lastLossAt() {
        return lastLossAt;
    }

    /**
     * The guards' timer: it only schedules, marks guards lost and interrupts workers; it never
     * borrows a connection or runs a user's callback, so a deadline fires however stuck renewals are.
     *
     * @throws RejectedExecutionException if closed
     */
    public ScheduledExecutorService timer() {
        ScheduledExecutorService s = timer;
        if (s == null) {
            synchronized (this) {
                s = timer;
                if (s == null) {
                    rejectIfClosed();
                    ScheduledThreadPoolExecutor pool =
                            new ScheduledThreadPoolExecutor(1, daemon("holdfast-lease-timer-" + suffix));
                    pool.setRemoveOnCancelPolicy(true);
                    pool.setKeepAliveTime(60, TimeUnit.SECONDS);
                    pool.allowCoreThreadTimeOut(true); // an idle timer holds no thread
                    timer = s = pool;
                }
            }
        }
        return s;
    }

    /**
     * Runs renewals, {@code onLost} callbacks and connection borrows, each on a thread of its own
     * (threads are reused and end after a minute idle), so one stuck task delays no other.
     *
     * @throws RejectedExecutionException if closed
     */
    public ExecutorService background() {
        ExecutorService s = background;
        if (s == null) {
            synchronized (this) {
                s = background;
                if (s == null) {
                    rejectIfClosed();
                    background = s = new ThreadPoolExecutor(
                            0,
                            Integer.MAX_VALUE,
                            60,
                            TimeUnit.SECONDS,
                            new SynchronousQueue<>(),
                            daemon("holdfast-lease-keepalive-" + suffix));
                }
            }
        }
        return s;
    }

    boolean isClosed() {
        return closed;
    }

    /** Stops both pools; tasks on them are interrupted, and no pool starts again. */
    @Override
    public void close() {
        ScheduledExecutorService t;
        ExecutorService b;
        synchronized (this) { // a pool is created under this lock, after a check of closed
            closed = true;
            t = timer;
            b = background;
        }
        if (t != null) {
            t.shutdownNow();
        }
        if (b != null) {
            b.shutdownNow();
        }
    }

    /** After {@link #close}, callers see what a shut-down pool would tell them. */
    private void rejectIfClosed() {
        if (closed) {
            throw new RejectedExecutionException("The lease service is closed");
        }
    }

    private static ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }
}
