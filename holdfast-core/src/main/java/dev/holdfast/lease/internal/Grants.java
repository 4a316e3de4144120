package dev.holdfast.lease.internal;

import org.jspecify.annotations.Nullable;

import java.util.function.BiConsumer;

/**
 * Where every grant of a service passes before it is returned: recorded for cohort hand-off (when
 * on) and shown to a test's observer, with the path by which it reached its caller.
 */
public final class Grants {

    /** How a grant reached its caller. */
    public enum Path {
        /** {@code tryAcquire}'s statement, alone or in a batch, or a {@code acquire} call with no wait. */
        ACQUIRED,
        /** A waiting {@code acquire} call's own attempt (which may pick up a grant a release handed to it). */
        QUEUED_ATTEMPT,
        /** A release's hand-off, learned from its notification: no statement of the waiter's own. */
        HANDED_OFF,
        /** Passed on in memory by a holder of this service (cohort hand-off). */
        PASSED_IN_MEMORY
    }

    private final @Nullable CohortHandOffs cohorts;
    private volatile @Nullable BiConsumer<LeaseRow, Path> observer;
    private volatile @Nullable BiConsumer<LeaseRow, Path> listener;

    Grants(@Nullable CohortHandOffs cohorts) {
        this.cohorts = cohorts;
    }

    /** A grant the database made (its statement sent at {@code sentNanos}); returns it. */
    LeaseRow fromDatabase(LeaseRow grant, long sentNanos, Path path) {
        if (cohorts != null) {
            cohorts.granted(grant, sentNanos);
        }
        return observed(grant, path);
    }

    /** A grant passed on in memory; returns it. */
    LeaseRow passedInMemory(LeaseRow grant) {
        return observed(grant, Path.PASSED_IN_MEMORY);
    }

    /** Tests: told of each grant, on the caller's thread, before it is returned. */
    void observe(@Nullable BiConsumer<LeaseRow, Path> observer) {
        this.observer = observer;
    }

    /** The service's own listener (its builder's {@code onGrant}), told before a test's observer. */
    void listen(@Nullable BiConsumer<LeaseRow, Path> listener) {
        this.listener = listener;
    }

    private LeaseRow observed(LeaseRow grant, Path path) {
        BiConsumer<LeaseRow, Path> l = listener;
        if (l != null) {
            try {
                l.accept(grant, path);
            } catch (RuntimeException ignored) {
                // a listener never changes the outcome of a grant
            }
        }
        BiConsumer<LeaseRow, Path> o = observer;
        if (o != null) {
            o.accept(grant, path);
        }
        return grant;
    }
}
