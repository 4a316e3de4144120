package dev.holdfast.lease;

import dev.holdfast.DatabaseException;
import dev.holdfast.lease.LeaseFailoverTest.Grant;
import dev.holdfast.lease.LeaseFailoverTest.Write;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fenced lease workers of the failover tests ({@link LeaseFailoverTest}, and holdfast-ha-tests'
 * Patroni test): one worker per service, each takes a random name ({@link FencedWork#acquire}), checks the
 * grant against the name's live one, runs the fenced section on the resource table, and releases; a
 * {@link DatabaseException} (the database is away) is counted by type and backed off from. What they saw
 * is kept for the checker.
 */
final class FailoverWorkers {

    final Queue<Grant> grants = new ConcurrentLinkedQueue<>();
    final Queue<Write> accepted = new ConcurrentLinkedQueue<>();
    final Queue<String> unexpected = new ConcurrentLinkedQueue<>();
    final Queue<Grant[]> overlaps = new ConcurrentLinkedQueue<>();
    final AtomicLong pauses = new AtomicLong();
    final AtomicLong refused = new AtomicLong();
    final AtomicLong lostReleases = new AtomicLong();
    private final Map<String, AtomicLong> typedErrors = new ConcurrentHashMap<>();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final String[] names;
    private final ExecutorService executor;
    private final List<Future<?>> futures = new ArrayList<>();

    /** Starts one worker per service (owner {@code worker-<i>}), plus room for {@code extraThreads} of {@link #submit}. */
    FailoverWorkers(
            List<LeaseService> services,
            String[] names,
            Duration ttl,
            FencedWork work,
            DataSource resources,
            int extraThreads) {
        this.names = names;
        this.executor = Executors.newFixedThreadPool(services.size() + extraThreads);
        Map<String, AtomicReference<Grant>> live = new ConcurrentHashMap<>();
        for (String name : names) {
            live.put(name, new AtomicReference<>());
        }
        for (int w = 0; w < services.size(); w++) {
            int worker = w;
            LeaseService leases = services.get(w);
            futures.add(executor.submit(() -> work(leases, worker, ttl, work, resources, live)));
        }
    }

    private Void work(
            LeaseService leases,
            int worker,
            Duration ttl,
            FencedWork work,
            DataSource resources,
            Map<String, AtomicReference<Grant>> live)
            throws InterruptedException {
        String owner = "worker-" + worker;
        ThreadLocalRandom random = ThreadLocalRandom.current();
        while (!stop.get()) {
            String name = names[random.nextInt(names.length)];
            Lease lease;
            try {
                Optional<Lease> granted = FencedWork.acquire(leases, worker, name, owner, ttl, Duration.ofSeconds(2));
                if (granted.isEmpty()) {
                    continue;
                }
                lease = granted.get();
            } catch (LeaseTimeoutException e) {
                continue;
            } catch (DatabaseException e) {
                typedError(e);
                Thread.sleep(20); // backs off while the database is away, as an application would
                continue;
            }
            Grant mine =
                    new Grant(name, owner, lease.token(), lease.acquiredAt(), lease.expiresAt(), System.nanoTime());
            grants.add(mine);
            List<Grant> overlap = FencedWork.overlap(live.get(name), mine);
            if (!overlap.isEmpty()) {
                overlaps.add(new Grant[] {overlap.get(0), overlap.get(1)});
            }
            try (Connection c = resources.getConnection()) {
                FencedWork.Outcome outcome = work.section(c, name, owner, lease.token(), pauses);
                if (outcome.accepted()) {
                    accepted.add(new Write(name, lease.token(), outcome.written()));
                } else {
                    refused.incrementAndGet();
                }
            } catch (SQLException e) {
                unexpected.add("resource store: " + e);
            }
            live.get(name).compareAndSet(mine, null);
            try {
                leases.release(lease);
            } catch (LeaseNotHeldException e) { // includes LeaseExpiredException
                lostReleases.incrementAndGet();
            } catch (DatabaseException e) {
                typedError(e);
            }
        }
        return null;
    }

    private void typedError(DatabaseException e) {
        typedErrors
                .computeIfAbsent(e.getClass().getSimpleName(), k -> new AtomicLong())
                .incrementAndGet();
    }

    /** Runs {@code task} beside the workers until {@link #stop}; it reads {@link #stopping()}. */
    void submit(Callable<?> task) {
        futures.add(executor.submit(task));
    }

    /** True once {@link #stop} was called. */
    AtomicBoolean stopping() {
        return stop;
    }

    /** Stops every worker and waits for them; a worker that failed is an unexpected failure. */
    void stop() throws InterruptedException, java.util.concurrent.TimeoutException {
        stop.set(true);
        for (Future<?> f : futures) {
            try {
                f.get(60, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                unexpected.add("worker failed: " + e.getCause());
            }
        }
        executor.shutdownNow();
    }

    /** The typed errors the workers saw, by exception type. */
    Map<String, Long> typedErrors() {
        Map<String, Long> errors = new TreeMap<>();
        typedErrors.forEach((k, v) -> errors.put(k, v.get()));
        return errors;
    }

    /** How many typed errors the workers saw. */
    long typedErrorCount() {
        return typedErrors.values().stream().mapToLong(AtomicLong::get).sum();
    }

    /** What the accepted writes say: stale writes accepted, lost or duplicated updates. */
    record Writes(long staleAccepted, long lostOrDuplicated) {}

    /**
     * Checks the accepted writes of every name: in value order 1..N exactly once, never down in token, and the
     * resource counter equal to their number (asserted).
     */
    Writes checkWrites(DataSource resources, String resource) throws SQLException {
        long staleAccepted = 0;
        long lostOrDuplicated = 0;
        for (String name : names) {
            List<Write> writes = accepted.stream()
                    .filter(x -> x.name().equals(name))
                    .sorted(Comparator.comparingLong(Write::value))
                    .toList();
            for (int i = 0; i < writes.size(); i++) {
                if (writes.get(i).value() != i + 1) {
                    lostOrDuplicated++;
                }
                if (i > 0 && writes.get(i).token() < writes.get(i - 1).token()) {
                    staleAccepted++;
                }
            }
            try (Connection c = resources.getConnection()) {
                assertThat(FencedWork.counter(c, resource, name))
                        .as("resource counter of " + name)
                        .isEqualTo(writes.size());
            }
        }
        return new Writes(staleAccepted, lostOrDuplicated);
    }
}
