package dev.holdfast.lease.internal;

import dev.holdfast.internal.Invariants;
import org.jspecify.annotations.Nullable;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * The parts of one lease service, wired from its settings: who runs statements, who waits,
 * who releases and renews, and the optional cohort hand-off and batching.
 */
record LeaseParts(
        LeaseCalls calls,
        LeaseStore store,
        WakeUps wakeUps,
        LeaseThreads threads,
        @Nullable CohortHandOffs cohorts,
        @Nullable LeaseBatches batches,
        LocalPollers pollers,
        Grants grants,
        BlockingAcquire blocking,
        Releases releases,
        Renewals renewals) {

    static LeaseParts of(LeaseSettings s) {
        LeaseStore store = LeaseStores.forSettings(s);
        LeaseCalls calls = new LeaseCalls(s.dataSource(), s.dialect(), store);
        LeaseThreads threads = new LeaseThreads(s.table());
        // Cohorts and batches give leases back through the releases, which route through them: set
        // below, before this returns, so before any call can give a lease back.
        AtomicReference<Releases> late = new AtomicReference<>();
        Supplier<Releases> lateReleases = () -> Invariants.nonNull(late.get(), "releases are set before any call");
        CohortHandOffs cohorts = s.cohortHandOffs() == 0
                ? null
                : new CohortHandOffs(
                        s.cohortHandOffs(),
                        (name, owner, token, tokens, ttl) -> calls.call(
                                "reserving tokens of", name, c -> store.reserve(c, name, owner, token, tokens, ttl)),
                        lease -> lateReleases.get().releaseQuietly(lease));
        LeaseBatches batches = LeaseBatches.of(
                s, store, calls, r -> lateReleases.get().releasedInDatabase(r.name(), r.owner(), r.token(), null));
        LocalPollers pollers = new LocalPollers();
        WakeUps wakeUps = store.wakeUps(s, pollers, threads);
        Grants grants = new Grants(cohorts);
        BlockingAcquire blocking = new BlockingAcquire(
                calls,
                store,
                new TimeoutLook(store.sql()),
                wakeUps,
                threads,
                cohorts,
                grants,
                s.tuning().polling());
        Refusals refusals = new Refusals(calls, store);
        Releases releases = new Releases(calls, store, cohorts, batches, pollers, refusals, s.relaxedReleases());
        late.set(releases);
        Renewals renewals = new Renewals(calls, store, cohorts, refusals, releases);
        return new LeaseParts(
                calls, store, wakeUps, threads, cohorts, batches, pollers, grants, blocking, releases, renewals);
    }
}
