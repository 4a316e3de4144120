package dev.holdfast.lease.internal;

import dev.holdfast.internal.Invariants;
import org.jspecify.annotations.Nullable;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * The parts of one lease service, wired from its settings: who runs statements, who waits,
 * who releases and renews, and the optional cohort hand-off and batching.
 */
record LeaseParts(LeaseCalls calls, LeaseJdbc jdbc, @Nullable PgWakeUps wakeUps, @Nullable MariaDbWakeUps mariaDbWakeUps,
                  LeaseThreads threads,
                  @Nullable CohortHandOffs cohorts, @Nullable LeaseBatches batches, LocalPollers pollers,
                  Grants grants, BlockingAcquire blocking, Releases releases, Renewals renewals) {

    static LeaseParts of(LeaseSettings s) {
        LeaseSql sql = LeaseSqls.forSettings(s);
        LeaseJdbc jdbc = new LeaseJdbc(sql);
        LeaseCalls calls = new LeaseCalls(s.dataSource(), s.dialect(), jdbc);
        DataSource direct = s.listenerDataSource();
        DataSource listener = direct != null ? direct : s.dataSource();
        PgWakeUps wakeUps = sql instanceof PgLeaseSql pg ? new PgWakeUps(listener, pg, s.tuning().notifyProbe().toMillis()) : null;
        LeaseThreads threads = new LeaseThreads(s.table());
        // Cohorts and batches give leases back through the releases, which route through them: set
        // below, before this returns, so before any call can give a lease back.
        AtomicReference<Releases> late = new AtomicReference<>();
        Supplier<Releases> lateReleases = () -> Invariants.nonNull(late.get(), "releases are set before any call");
        CohortHandOffs cohorts = s.cohortHandOffs() == 0 ? null : new CohortHandOffs(s.cohortHandOffs(),
                (name, owner, token, tokens, ttl) -> calls.call("reserving tokens of", name,
                        c -> jdbc.reserve(c, name, owner, token, tokens, ttl)),
                lease -> lateReleases.get().releaseQuietly(lease));
        LeaseBatches batches = LeaseBatches.of(s, sql, jdbc, calls,
                r -> lateReleases.get().releasedInDatabase(r.name(), r.owner(), r.token(), null));
        LocalPollers pollers = new LocalPollers();
        MariaDbWakeUps mariaDbWakeUps = sql instanceof MariaDbLeaseSql maria && s.tuning().wakeUps()
                ? new MariaDbWakeUps(s.dataSource(), s.connectionPool(), maria, pollers, threads, s.tuning().polling().safetyPollNanos(),
                jdbc.handOffWakes().nextWaiters()) : null;
        Grants grants = new Grants(cohorts);
        BlockingAcquire blocking = new BlockingAcquire(calls, jdbc, new TimeoutLook(sql), wakeUps, mariaDbWakeUps, threads, pollers,
                cohorts, grants, s.tuning().polling());
        Refusals refusals = new Refusals(calls, jdbc);
        Releases releases = new Releases(calls, jdbc, cohorts, batches, pollers, refusals, s.relaxedReleases(),
                sql instanceof MariaDbLeaseSql);
        late.set(releases);
        Renewals renewals = new Renewals(calls, jdbc, cohorts, refusals, releases);
        return new LeaseParts(calls, jdbc, wakeUps, mariaDbWakeUps, threads, cohorts, batches, pollers, grants, blocking, releases, renewals);
    }
}
