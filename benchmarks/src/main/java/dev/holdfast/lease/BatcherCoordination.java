package dev.holdfast.lease;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Phaser;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * What coordinating threads in lockstep costs, without a database: {@code threads} threads each
 * submit an "acquire" then a "release" call, and a batch's statement is a park of {@code statementMicros}
 * (as a leader blocked on its socket). Compares the service's {@link Batcher} in lockstep (one
 * statement in flight, a linger) with a bare {@link Phaser} whose last arrival runs the statement:
 * pairs per second and CPU per pair of this JVM, alternating blocks. Usage: {@code java -cp
 * benchmarks.jar dev.holdfast.lease.BatcherCoordination <threads> <statementMicros> <rounds> <blockMillis>}.
 */
public final class BatcherCoordination {

    interface PairRun {
        void run(int t) throws Exception;

        default void start(int threads) {
        }

        default void finish(int t) {
        }
    }

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        long statementNanos = Long.parseLong(args[1]) * 1000;
        int rounds = Integer.parseInt(args[2]);
        long blockMillis = Long.parseLong(args[3]);
        Batcher.Runner<String, Boolean> runner = batch -> {
            LockSupport.parkNanos(statementNanos);
            return batch.stream().map(q -> Batcher.Outcome.of(true)).toList();
        };
        Batcher.Slots slots = new Batcher.Slots(300_000);
        Batcher<String, Boolean> acquires = new Batcher<>(slots, q -> q, String::compareTo, 1, 1, 64, runner);
        Batcher<String, Boolean> releases = new Batcher<>(slots, q -> q, String::compareTo, 1, 1, 64, runner);
        PairRun batcher = t -> {
            acquires.submit("n" + t);
            releases.submit("n" + t);
        };
        PairRun phaser = new PairRun() {
            volatile Phaser p;

            @Override
            public void start(int n) {
                p = new Phaser(n) {
                    @Override
                    protected boolean onAdvance(int phase, int parties) {
                        LockSupport.parkNanos(statementNanos);
                        return parties == 0;
                    }
                };
            }

            @Override
            public void run(int t) {
                p.arriveAndAwaitAdvance();
                p.arriveAndAwaitAdvance();
            }

            @Override
            public void finish(int t) {
                p.arriveAndDeregister();
            }
        };
        List<String> names = List.of("batcher", "phaser");
        List<PairRun> runs = List.of(batcher, phaser);
        List<List<double[]>> results = List.of(new ArrayList<>(), new ArrayList<>());
        for (int round = -2; round < rounds; round++) {
            for (int k = 0; k < runs.size(); k++) {
                int i = (k + Math.max(round, 0)) % runs.size();
                double[] r = block(runs.get(i), threads, blockMillis);
                if (round >= 0) {
                    results.get(i).add(r);
                }
            }
        }
        for (int i = 0; i < runs.size(); i++) {
            double[] rates = results.get(i).stream().mapToDouble(r -> r[0]).sorted().toArray();
            double[] cpu = results.get(i).stream().mapToDouble(r -> r[1]).sorted().toArray();
            System.out.printf("%-9s %d threads, statement %d us: median %.0f pairs/s (cycle %.0f us), CPU %.1f us per pair%n",
                    names.get(i), threads, statementNanos / 1000, rates[rates.length / 2],
                    threads / rates[rates.length / 2] * 1e6, cpu[cpu.length / 2]);
        }
    }

    private static double[] block(PairRun pair, int threads, long millis) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong done = new AtomicLong();
        CountDownLatch finished = new CountDownLatch(threads);
        pair.start(threads);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            workers.add(new Thread(() -> {
                try {
                    while (!stop.get()) {
                        pair.run(thread);
                        done.incrementAndGet();
                    }
                } catch (Exception e) {
                    e.printStackTrace();
                } finally {
                    pair.finish(thread);
                    finished.countDown();
                }
            }));
        }
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long cpu0 = os.getProcessCpuTime();
        long start = System.nanoTime();
        workers.forEach(Thread::start);
        Thread.sleep(millis);
        stop.set(true);
        finished.await();
        long elapsed = System.nanoTime() - start;
        long cpu = os.getProcessCpuTime() - cpu0;
        return new double[] {done.get() / (elapsed / 1e9), cpu / 1e3 / done.get()};
    }
}
