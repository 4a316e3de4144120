package dev.holdfast.lease.internal;

import dev.holdfast.DatabaseException;
import dev.holdfast.internal.Failures;
import dev.holdfast.jdbc.internal.Retry;
import org.jspecify.annotations.Nullable;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import javax.sql.DataSource;

/**
 * Batched commits (the builder's batching): concurrent {@code tryAcquire} calls of one
 * service go to the database as one multi-row acquire, concurrent releases as one multi-row release,
 * each with one commit ({@link Batcher}: a batch forms only while a statement is in flight, so a
 * lone call is sent at once, as the single-row statement it would be without batching). Each call
 * gets its own outcome: its grant or refusal, its release or refusal, and on a failure a
 * {@link DatabaseException} that names its own lease.
 */
public final class LeaseBatches {

    /** Rows per statement at most. */
    public static final int MAX_ROWS = 64;
    /** Statements of each kind in flight at most. */
    public static final int MAX_IN_FLIGHT = 4;
    /**
     * Calls that must be queued for another statement to start while one is in flight (measured:
     * 2–4 % more than one statement at a time at 8 and 16 threads).
     */
    public static final int OVERLAP_AT = 4;

    /**
     * The order of a batch's rows: by code point, as MariaDB's binary collation orders the primary key
     * its multi-row release locks in ({@code String.compareTo} orders by UTF-16 unit, which differs
     * for characters above U+FFFF). PostgreSQL sorts in its statements, by the column's collation.
     */
    public static final Comparator<String> CODE_POINT_ORDER = (a, b) -> {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int x = a.codePointAt(i);
            int y = b.codePointAt(j);
            if (x != y) {
                return Integer.compare(x, y);
            }
            i += Character.charCount(x);
            j += Character.charCount(y);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    };

    private final DataSource dataSource;
    private final LeaseStore store;
    private final Retry races;
    private final boolean relaxedRelease;
    private final Batcher<LeaseStore.Acquire, Optional<LeaseRow>> acquires;
    private final Batcher<LeaseStore.Release, Boolean> releases;
    /** A lone acquire and a lone release as the service runs them unbatched; null: as batches of one. */
    private final @Nullable Function<LeaseStore.Acquire, Optional<LeaseRow>> single;

    private final @Nullable Function<LeaseStore.Release, Boolean> lone;
    private final LongAdder batchedCalls = new LongAdder();
    private final LongAdder statements = new LongAdder();
    /** Per kind (0 acquire, 1 release): calls, and the statements they took (lone calls included). */
    private final LongAdder[] kindCalls = {new LongAdder(), new LongAdder()};

    private final LongAdder[] kindStatements = {new LongAdder(), new LongAdder()};

    /**
     * The batches {@code settings} ask for, or null: batching off, or a database without multi-row
     * statements (H2).
     *
     * @param lone a lone release as the service runs it unbatched (true if released)
     */
    static @Nullable LeaseBatches of(
            LeaseSettings settings, LeaseStore store, LeaseCalls calls, Function<LeaseStore.Release, Boolean> lone) {
        if (settings.batching() == BatchMode.OFF || store.batchSql() == null) {
            return null;
        }
        boolean alone = !settings.tuning().batchLoneCalls();
        LeaseTuning tuning = settings.tuning();
        int inFlight = tuning.batchesInFlight() > 0 ? tuning.batchesInFlight() : MAX_IN_FLIGHT;
        int overlapAt = tuning.overlapAt() > 0 ? tuning.overlapAt() : OVERLAP_AT;
        return new LeaseBatches(
                settings.dataSource(),
                store,
                calls.races(),
                settings.relaxedReleases(),
                inFlight,
                overlapAt,
                settings.batching(),
                alone ? a -> calls.acquire(a.name(), a.owner(), a.ttlMicros(), false) : null,
                alone ? lone : null);
    }

    /**
     * Releases never share the acquires' batcher: a release waits at most for the release statements in
     * flight, never for an acquire (that may wait for a row lock), so that no lease outlives its release
     * by more than a statement (issue 31, item 4).
     *
     * @param maxInFlight statements of each kind at once
     * @param overlapAt   calls queued before another statement of their kind starts while one is in flight
     * @param mode        {@link BatchMode#CONCURRENT} (the one batching mode)
     * @param single      a lone acquire, as the service runs it unbatched; null: as a batch of one
     * @param lone        a lone release (true if released), as the service runs it unbatched; null: as a batch of one
     */
    LeaseBatches(
            DataSource dataSource,
            LeaseStore store,
            Retry races,
            boolean relaxedRelease,
            int maxInFlight,
            int overlapAt,
            BatchMode mode,
            @Nullable Function<LeaseStore.Acquire, Optional<LeaseRow>> single,
            @Nullable Function<LeaseStore.Release, Boolean> lone) {
        this.dataSource = dataSource;
        this.store = store;
        this.races = races;
        this.relaxedRelease = relaxedRelease;
        this.single = single;
        this.lone = lone;
        if (mode == BatchMode.OFF) {
            throw new IllegalArgumentException("no batches without batching");
        }
        this.acquires = new Batcher<>(
                LeaseStore.Acquire::name,
                CODE_POINT_ORDER,
                maxInFlight,
                overlapAt,
                MAX_ROWS,
                counted(
                        0,
                        batch -> batch.size() == 1 && single != null ? one(batch.get(0), single) : acquireAll(batch)));
        this.releases = new Batcher<>(
                LeaseStore.Release::name,
                CODE_POINT_ORDER,
                maxInFlight,
                overlapAt,
                MAX_ROWS,
                counted(1, batch -> batch.size() == 1 && lone != null ? one(batch.get(0), lone) : releaseAll(batch)));
    }

    /** The grant, or empty if the lease is live ({@code LeaseService#tryAcquire}). */
    public Optional<LeaseRow> acquire(String name, String owner, long ttlMicros) {
        return acquires.submit(new LeaseStore.Acquire(name, owner, ttlMicros));
    }

    /** Releases the grant with {@code token}; false if it is not held. */
    public boolean release(String name, String owner, long token) {
        return releases.submit(new LeaseStore.Release(name, owner, token));
    }

    private static <Q, R> List<Batcher.Outcome<R>> one(Q call, Function<Q, R> run) {
        try {
            return List.of(Batcher.Outcome.of(run.apply(call)));
        } catch (RuntimeException e) {
            return List.of(Batcher.Outcome.failed(e));
        }
    }

    /** {@code runner}, counting each batch as a statement of {@code kind} (0 acquire, 1 release). */
    private <Q, R> Batcher.Runner<Q, R> counted(int kind, Batcher.Runner<Q, R> runner) {
        return batch -> {
            kindCalls[kind].add(batch.size());
            kindStatements[kind].increment();
            return runner.run(batch);
        };
    }

    /** Acquire calls, acquire statements, release calls, release statements. */
    long[] counts() {
        return new long[] {kindCalls[0].sum(), kindStatements[0].sum(), kindCalls[1].sum(), kindStatements[1].sum()};
    }

    /** Tests: calls queued for a batch of either kind. */
    public int queued() {
        return acquires.queued() + releases.queued();
    }

    /** Tests and benchmarks: how many multi-row statements were sent. */
    public long multiRowStatements() {
        return statements.sum();
    }

    /** Tests: how many calls went in batches of more than one. */
    public long batchedCalls() {
        return batchedCalls.sum();
    }

    private List<Batcher.Outcome<Optional<LeaseRow>>> acquireAll(List<LeaseStore.Acquire> batch) {
        batchedCalls.add(batch.size() > 1 ? batch.size() : 0);
        statements.increment();
        Map<String, LeaseRow> granted;
        try {
            granted = races.autocommit(
                    dataSource, null, () -> "acquiring " + batch.size() + " leases", c -> store.acquireAll(c, batch));
        } catch (DatabaseException e) {
            return batch.stream()
                    .map(a -> Batcher.Outcome.<Optional<LeaseRow>>failed(Failures.database(
                            "acquiring lease '" + a.name() + "' for '" + a.owner() + "' (in a batch of " + batch.size()
                                    + ")",
                            e.sqlException())))
                    .toList();
        }
        return batch.stream()
                .map(a -> Batcher.Outcome.of(Optional.ofNullable(granted.get(a.name()))))
                .toList();
    }

    /**
     * One statement releases the batch; then each released lease that has a waiter is handed off,
     * on an auto-commit connection each in its own transaction (a failed hand-off fails only its
     * own call, whose release did commit, as a single release's separate hand-off), else all in the batch's
     * transaction (a failure rolls the batch back and fails every call).
     */
    private List<Batcher.Outcome<Boolean>> releaseAll(List<LeaseStore.Release> batch) {
        batchedCalls.add(batch.size() > 1 ? batch.size() : 0);
        statements.increment();
        Map<String, SQLException> handOffFailures = new HashMap<>();
        Set<String> released;
        try {
            released = races.autocommit(dataSource, null, () -> "releasing " + batch.size() + " leases", c -> {
                handOffFailures.clear();
                boolean autoCommit = c.getAutoCommit();
                Map<String, Boolean> rows = store.releaseAll(c, batch, relaxedRelease && autoCommit);
                for (Map.Entry<String, Boolean> row : rows.entrySet()) {
                    if (!row.getValue()) {
                        continue;
                    }
                    if (!autoCommit) {
                        store.handOff(c, row.getKey());
                    } else {
                        try {
                            store.handOff(c, row.getKey());
                        } catch (SQLException e) {
                            handOffFailures.put(row.getKey(), e); // its release stands: not a race to repeat
                        }
                    }
                }
                return rows.keySet();
            });
        } catch (DatabaseException e) {
            return batch.stream()
                    .map(r -> Batcher.Outcome.<Boolean>failed(Failures.database(
                            releasing(r) + " (in a batch of " + batch.size() + ")", e.sqlException())))
                    .toList();
        }
        List<Batcher.Outcome<Boolean>> outcomes = new ArrayList<>();
        for (LeaseStore.Release r : batch) {
            SQLException failed = handOffFailures.get(r.name());
            outcomes.add(
                    failed != null
                            ? Batcher.Outcome.failed(
                                    Failures.database(releasing(r) + ", then handing it to its first waiter", failed))
                            : Batcher.Outcome.of(released.contains(r.name())));
        }
        return outcomes;
    }

    private static String releasing(LeaseStore.Release r) {
        return "releasing lease '" + r.name() + "'";
    }
}
