package dev.holdfast.testing.contract;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/** Callers on threads of their own, released at the same moment, so that their calls race. */
final class Race {

    private Race() {}

    /**
     * Runs {@code callers} calls at once, {@code call.apply(i)} being caller i's, and returns their
     * results in caller order (at most 30 s each).
     */
    static <T> List<T> run(int callers, IntFunction<Callable<T>> call) throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(callers);
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (int i = 0; i < callers; i++) {
                Callable<T> work = call.apply(i);
                futures.add(pool.submit(() -> {
                    start.await();
                    return work.call();
                }));
            }
            start.countDown();
            List<T> results = new ArrayList<>();
            for (Future<T> f : futures) {
                results.add(f.get(30, TimeUnit.SECONDS));
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }
}
