package dev.holdfast.benchmarks;

import dev.holdfast.lease.internal.BatchSlots;
import dev.holdfast.lease.internal.Batcher;
import dev.holdfast.benchmarks.LeaseInterleaved;
import dev.holdfast.benchmarks.LeaseInterleaved.Pair;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Phaser;
import java.util.concurrent.locks.LockSupport;

/**
 * What coordinating threads in lockstep costs, without a database: {@code threads} threads each
 * submit an "acquire" then a "release" call, and a batch's statement is a park of {@code statementMicros}
 * (as a leader blocked on its socket). Compares the service's {@link Batcher} in lockstep (one
 * statement in flight, a linger) with a bare {@link Phaser} whose last arrival runs the statement:
 * pairs per second and CPU per pair of this JVM, alternating blocks. Usage: {@code java -cp
 * benchmarks.jar dev.holdfast.benchmarks.BatcherCoordination <threads> <statementMicros> <rounds> <blockMillis>}.
 */
public final class BatcherCoordination {

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        long statementNanos = Long.parseLong(args[1]) * 1000;
        int rounds = Integer.parseInt(args[2]);
        long blockMillis = Long.parseLong(args[3]);
        Batcher.Runner<String, Boolean> runner = batch -> {
            LockSupport.parkNanos(statementNanos);
            return batch.stream().map(q -> Batcher.Outcome.of(true)).toList();
        };
        BatchSlots slots = new BatchSlots(300_000);
        Batcher<String, Boolean> acquires = new Batcher<>(slots, q -> q, String::compareTo, 1, 1, 64, runner);
        Batcher<String, Boolean> releases = new Batcher<>(slots, q -> q, String::compareTo, 1, 1, 64, runner);
        Pair batcher = (t, i) -> {
            acquires.submit("n" + t);
            releases.submit("n" + t);
        };
        Pair phaser = new Pair() {
            volatile Phaser p;

            @Override
            public void startBlock(int n) {
                p = new Phaser(n) {
                    @Override
                    protected boolean onAdvance(int phase, int parties) {
                        LockSupport.parkNanos(statementNanos);
                        return parties == 0;
                    }
                };
            }

            @Override
            public void run(int t, int i) {
                p.arriveAndAwaitAdvance();
                p.arriveAndAwaitAdvance();
            }

            @Override
            public void finish(int t) {
                p.arriveAndDeregister();
            }
        };
        List<String> names = List.of("batcher", "phaser");
        List<Pair> runs = List.of(batcher, phaser);
        List<List<double[]>> results = List.of(new ArrayList<>(), new ArrayList<>());
        for (int round = -2; round < rounds; round++) {
            for (int k = 0; k < runs.size(); k++) {
                int i = (k + Math.max(round, 0)) % runs.size();
                double[] r = LeaseInterleaved.block(runs.get(i), threads, blockMillis);
                if (round >= 0) {
                    results.get(i).add(new double[] {r[0], r[3] / 1e3 / r[1]}); // pairs/s, JVM CPU µs per pair
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
}
