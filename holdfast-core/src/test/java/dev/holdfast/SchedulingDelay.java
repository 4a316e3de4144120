package dev.holdfast;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How late this machine wakes a sleeping thread while a test runs: a thread that sleeps 10 ms again and again
 * and keeps the worst overshoot. A bound on "told by the deadline" is then the design's slack plus what the
 * machine itself added in the same run, so that a shared machine with both cores busy cannot fail the test,
 * while a wake-up that the code itself makes late (a poll, a missed timer) still does.
 */
public final class SchedulingDelay implements AutoCloseable {

    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final AtomicLong worstNanos = new AtomicLong();
    private final Thread ticker;
    private volatile boolean stopped;

    private SchedulingDelay() {
        ticker = new Thread(this::tick, "scheduling-delay");
        ticker.setDaemon(true);
    }

    /** Starts watching; {@link #close()} stops. */
    public static SchedulingDelay watch() {
        SchedulingDelay delay = new SchedulingDelay();
        delay.ticker.start();
        return delay;
    }

    private void tick() {
        while (!stopped) {
            long before = System.nanoTime();
            try {
                Thread.sleep(TimeUnit.NANOSECONDS.toMillis(TICK_NANOS));
            } catch (InterruptedException e) {
                return;
            }
            long late = System.nanoTime() - before - TICK_NANOS;
            worstNanos.accumulateAndGet(late, Math::max);
        }
    }

    /** The worst overshoot seen so far, in milliseconds. */
    public long worstMillis() {
        return TimeUnit.NANOSECONDS.toMillis(worstNanos.get());
    }

    @Override
    public void close() throws InterruptedException {
        stopped = true;
        ticker.interrupt();
        ticker.join();
    }
}
