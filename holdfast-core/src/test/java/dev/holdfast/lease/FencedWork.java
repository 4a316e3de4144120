package dev.holdfast.lease;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The work of a worker in {@link LeaseStressTest} and {@link LeaseFailoverTest}: how it takes a
 * lease (even workers spin on {@code tryAcquire}, odd ones block in {@code lock}), the check that a
 * grant did not begin while the previous grant of its name was live and unreleased, and the section
 * under the lease on a resource row per name: claim the row with the token, read its counter,
 * sometimes pause past the TTL, write counter + 1 with the token ({@link FencedUpdate} both). The
 * resource table and its counter are {@link FaultChecker}'s too.
 */
final class FencedWork {

    /** A grant as its worker saw it: what the overlap check reads. */
    interface Seen {
        long token();

        Instant acquiredAt();

        Instant expiresAt();
    }

    /** How often a section pauses ({@code 1 in oneIn}), and how long: the TTL plus {@code extraMillis} plus up to {@code jitterMillis}. */
    record Pause(int oneIn, Duration ttl, int extraMillis, int jitterMillis) {}

    /** A section's end: its claim or its write refused (a newer token got there), or the counter value it wrote. */
    record Outcome(boolean claimRefused, boolean writeRefused, long written) {
        boolean accepted() {
            return !claimRefused && !writeRefused;
        }
    }

    private final String resource;
    private final FencedUpdate claim;
    private final FencedUpdate write;
    private final Pause pause;

    FencedWork(String resource, Pause pause) {
        this.resource = resource;
        this.claim = FencedUpdate.of(resource, "name", "fence", "holder");
        this.write = FencedUpdate.of(resource, "name", "fence", "val", "holder");
        this.pause = pause;
    }

    /** The resource table: a counter per name, its holder, and the fence (the highest token that wrote). */
    static String createTableSql(String resource) {
        return "CREATE TABLE " + resource + " (name VARCHAR(50) PRIMARY KEY, val BIGINT NOT NULL,"
                + " holder VARCHAR(50), fence BIGINT)";
    }

    /** Whether {@code worker} spins on {@code tryAcquire} (the even ones) rather than blocking in {@code lock}. */
    static boolean spins(int worker) {
        return worker % 2 == 0;
    }

    /**
     * Takes {@code name}: a spinning worker tries once and, refused, backs off up to 1 ms (so that the
     * spinners leave the database to the others now and then); a blocking one waits up to {@code maxWait}.
     *
     * @return the lease, or empty if a spinner was refused
     * @throws LeaseTimeoutException if a blocking worker waited {@code maxWait} in vain
     */
    static Optional<Lease> acquire(
            LeaseService leases, int worker, String name, String owner, Duration ttl, Duration maxWait)
            throws InterruptedException {
        if (!spins(worker)) {
            return Optional.of(leases.acquire(name, owner, ttl, maxWait));
        }
        Optional<Lease> granted = leases.tryAcquire(name, owner, ttl);
        if (granted.isEmpty()) {
            Thread.sleep(0, ThreadLocalRandom.current().nextInt(1_000_000)); // the spinner's back-off
        }
        return granted;
    }

    /**
     * Makes {@code mine} the live grant of its name. Neither it nor the grant it replaces has been
     * released by its worker yet (a worker leaves {@code live} before it releases), so the earlier
     * token's grant must have expired, by database time, before the later one began.
     *
     * @return the earlier and the later grant if they overlap, else an empty list
     */
    static <G extends Seen> List<G> overlap(AtomicReference<G> live, G mine) {
        G other = live.getAndSet(mine);
        if (other == null) {
            return List.of();
        }
        G earlier = other.token() < mine.token() ? other : mine;
        G later = earlier == mine ? other : mine;
        return earlier.expiresAt().isAfter(later.acquiredAt()) ? List.of(earlier, later) : List.of();
    }

    /** The counter of {@code name} in the resource table {@code resource}, read on {@code c}. */
    static long counter(Connection c, String resource, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT val FROM " + resource + " WHERE name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /**
     * The section under the lease of {@code name} with {@code token}, on {@code c}; counts its pauses
     * past the TTL in {@code pauses}.
     */
    Outcome section(Connection c, String name, String owner, long token, AtomicLong pauses)
            throws SQLException, InterruptedException {
        if (!claim.update(c, token, name, owner)) {
            return new Outcome(true, false, 0);
        }
        long value = counter(c, resource, name);
        ThreadLocalRandom random = ThreadLocalRandom.current();
        if (random.nextInt(pause.oneIn()) == 0) {
            pauses.incrementAndGet();
            // A holder that stalls past its TTL (a GC pause, a slow disk): what the fence is for.
            Thread.sleep(pause.ttl().toMillis() + pause.extraMillis() + random.nextInt(pause.jitterMillis()));
        }
        if (!write.update(c, token, name, value + 1, owner)) {
            return new Outcome(false, true, 0);
        }
        return new Outcome(false, false, value + 1);
    }
}
