package dev.holdfast.lease;

import dev.holdfast.internal.Arguments;
import dev.holdfast.lease.internal.LeaseProbe;
import org.jspecify.annotations.Nullable;

import java.time.Instant;

/**
 * How one {@link LeaseService} is doing now, for health reports: how its waiting calls learn of a
 * release, and the kept-alive leases its guards lost since it was built. A snapshot.
 *
 * @param listening            PostgreSQL: whether its listener listens now, so that waiters are
 *                             notified ({@code LISTEN}); false elsewhere, and until a waiting call starts it
 * @param listenerBehindPooler PostgreSQL: whether the listener found that a pooler keeps notifications
 *                             from it (PgBouncer in transaction mode), so that waiters poll
 * @param wakeUpWatching       MariaDB: whether its wake-up connection is up, so that waiters watch it for
 *                             a release; false elsewhere
 * @param leasesLost           how many kept-alive leases its guards lost since it was built
 * @param lastLoss             why the latest of those was lost (name, owner, token, reason), or null if none was
 * @param lastLossAt           when the latest of those was found lost (this JVM's clock), or null if none was
 */
public record LeaseHealth(
        boolean listening,
        boolean listenerBehindPooler,
        boolean wakeUpWatching,
        long leasesLost,
        @Nullable String lastLoss,
        @Nullable Instant lastLossAt) {

    /**
     * {@return the health of {@code service} now}
     *
     * @param service the service to report on
     * @throws IllegalArgumentException if {@code service} is null
     */
    public static LeaseHealth of(LeaseService service) {
        LeaseProbe probe = Arguments.notNull(service, "service").probe();
        return new LeaseHealth(
                probe.listening(),
                probe.listenerBehindPooler(),
                probe.wakeUpWatching(),
                probe.leasesLost(),
                probe.lastLoss(),
                probe.lastLossAt());
    }
}
