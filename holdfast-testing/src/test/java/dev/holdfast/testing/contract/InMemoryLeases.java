package dev.holdfast.testing.contract;

import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseExpiredException;
import dev.holdfast.lease.LeaseNotHeldException;
import dev.holdfast.lease.LeaseTimeoutException;
import dev.holdfast.lease.Leases;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A second, trivial {@link Leases}: one process, one map, the JVM's clock, every call under one
 * monitor. It writes nothing of its own for keep-alive: it inherits {@link Leases#keepAlive}.
 */
final class InMemoryLeases implements Leases {

    private static final Duration MAX = Duration.ofDays(366);

    /** The row of a name, and who broke it if an operator did. */
    private record Row(Lease lease, boolean broken, String brokenBy, Instant brokenAt) {
        boolean liveAt(Instant now) {
            return lease.expiresAt().isAfter(now);
        }
    }

    private final Map<String, Row> rows = new HashMap<>();
    /** The blocking calls waiting per name, by arrival number. */
    private final Map<String, List<Long>> waiting = new HashMap<>();

    private long lastToken;
    private long arrivals;

    @Override
    public synchronized Optional<Lease> tryAcquire(String name, String owner, Duration ttl) {
        check(name, owner);
        checkTtl(ttl);
        return grant(name, owner, ttl);
    }

    @Override
    public synchronized Optional<Lease> tryAcquireOrRenew(String name, String owner, Duration ttl) {
        check(name, owner);
        checkTtl(ttl);
        Instant now = now();
        Row row = rows.get(name);
        if (row != null && row.liveAt(now) && row.lease().owner().equals(owner)) {
            Lease l = row.lease();
            Lease renewed = new Lease(name, owner, l.token(), l.acquiredAt(), now.plus(ttl));
            rows.put(name, new Row(renewed, false, null, null));
            return Optional.of(renewed);
        }
        return grant(name, owner, ttl);
    }

    @Override
    public synchronized Lease acquire(String name, String owner, Duration ttl, Duration maxWait)
            throws InterruptedException {
        check(name, owner);
        checkTtl(ttl);
        if (maxWait == null || maxWait.isNegative() || maxWait.compareTo(MAX) > 0) {
            throw new IllegalArgumentException("maxWait must be 0 to 366 days, not " + maxWait);
        }
        long deadline = System.nanoTime() + maxWait.toNanos();
        int attempts = 0;
        long arrival = ++arrivals;
        List<Long> queue = waiting.computeIfAbsent(name, n -> new ArrayList<>());
        queue.add(arrival);
        try {
            while (true) {
                attempts++;
                Optional<Lease> granted = grant(name, owner, ttl);
                if (granted.isPresent()) {
                    return granted.get();
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    Instant now = now();
                    Row row = rows.get(name);
                    Lease holder = row != null && row.liveAt(now) ? row.lease() : null;
                    int ahead = (int) queue.stream().filter(a -> a < arrival).count();
                    throw new LeaseTimeoutException(
                            name, owner, maxWait, attempts, holder == null ? null : holder.holder(), ahead, now);
                }
                // Woken by a release; else at the holder's expiry or the bound, whichever comes first.
                long untilExpiry = Duration.between(
                                now(), rows.get(name).lease().expiresAt())
                        .toNanos();
                long waitNanos = Math.max(1_000_000, Math.min(left, untilExpiry));
                wait(waitNanos / 1_000_000, (int) (waitNanos % 1_000_000));
            }
        } finally {
            queue.remove(Long.valueOf(arrival));
            if (queue.isEmpty()) {
                waiting.remove(name);
            }
        }
    }

    @Override
    public synchronized Lease renew(Lease lease, Duration ttl) {
        checkLease(lease);
        checkTtl(ttl);
        Row row = held(lease, "renew");
        Lease l = row.lease();
        Lease renewed = new Lease(l.name(), l.owner(), l.token(), l.acquiredAt(), now().plus(ttl));
        rows.put(l.name(), new Row(renewed, false, null, null));
        return renewed;
    }

    @Override
    public void release(Lease lease) {
        release(lease, Duration.ZERO);
    }

    @Override
    public synchronized void release(Lease lease, Duration heldAtLeast) {
        checkLease(lease);
        if (heldAtLeast == null || heldAtLeast.isNegative() || heldAtLeast.compareTo(MAX) > 0) {
            throw new IllegalArgumentException("heldAtLeast must be 0 to 366 days, not " + heldAtLeast);
        }
        Lease l = held(lease, "release").lease();
        Instant until = l.acquiredAt().plus(heldAtLeast);
        Instant end = heldAtLeast.isZero() || !until.isAfter(now())
                ? l.acquiredAt()
                : until.isBefore(l.expiresAt()) ? until : l.expiresAt();
        rows.put(l.name(), new Row(new Lease(l.name(), l.owner(), l.token(), l.acquiredAt(), end), false, null, null));
        notifyAll();
    }

    @Override
    public synchronized void unlock(String name, String owner) {
        check(name, owner);
        Row row = rows.get(name);
        if (row == null || !row.liveAt(now()) || !row.lease().owner().equals(owner)) {
            throw notHeld("release", name, owner, null);
        }
        release(row.lease());
    }

    @Override
    public synchronized List<Lease> list() {
        Instant now = now();
        return rows.values().stream()
                .filter(r -> r.liveAt(now))
                .map(Row::lease)
                .sorted(Comparator.comparing(Lease::name))
                .toList();
    }

    @Override
    public synchronized Optional<Lease> find(String name) {
        checkName(name, "name");
        return Optional.ofNullable(rows.get(name)).map(Row::lease);
    }

    @Override
    public boolean forceRelease(String name) {
        return breakLease(name, null);
    }

    @Override
    public boolean forceRelease(String name, String by) {
        checkName(by, "by");
        return breakLease(name, by);
    }

    @Override
    public void close() {}

    private synchronized boolean breakLease(String name, String by) {
        checkName(name, "name");
        Instant now = now();
        Row row = rows.get(name);
        if (row == null || !row.liveAt(now)) {
            return false;
        }
        Lease l = row.lease();
        rows.put(name, new Row(new Lease(name, l.owner(), l.token(), l.acquiredAt(), l.acquiredAt()), true, by, now));
        notifyAll();
        return true;
    }

    private Optional<Lease> grant(String name, String owner, Duration ttl) {
        Instant now = now();
        Row row = rows.get(name);
        if (row != null && row.liveAt(now)) {
            return Optional.empty();
        }
        Lease granted = new Lease(name, owner, ++lastToken, now, now.plus(ttl));
        rows.put(name, new Row(granted, false, null, null));
        return Optional.of(granted);
    }

    /** The caller's live grant, or the refusal that says why it is not held. */
    private Row held(Lease lease, String action) {
        Row row = rows.get(lease.name());
        if (row != null
                && row.liveAt(now())
                && row.lease().owner().equals(lease.owner())
                && row.lease().token() == lease.token()) {
            return row;
        }
        throw notHeld(action, lease.name(), lease.owner(), lease.token());
    }

    private LeaseNotHeldException notHeld(String action, String name, String owner, Long token) {
        String cannot = "Cannot " + action + " lease '" + name + "' for '" + owner + "'";
        Row row = rows.get(name);
        if (row == null) {
            return new LeaseNotHeldException(
                    name,
                    cannot + ": there is no such lease",
                    null,
                    LeaseNotHeldException.Reason.NO_SUCH_LEASE,
                    null,
                    null);
        }
        Lease current = row.lease();
        boolean sameOwner = current.owner().equals(owner);
        if (sameOwner && (token == null || current.token() == token)) {
            if (row.broken()) {
                return new LeaseNotHeldException(
                        name,
                        cannot + ": it was broken by " + (row.brokenBy() == null ? "an operator" : row.brokenBy()),
                        current,
                        LeaseNotHeldException.Reason.BROKEN,
                        row.brokenBy(),
                        row.brokenAt());
            }
            if (current.isReleased()) {
                return new LeaseNotHeldException(
                        name,
                        cannot + ": it was already released",
                        current,
                        LeaseNotHeldException.Reason.RELEASED,
                        null,
                        null);
            }
            return new LeaseExpiredException(
                    name, cannot + ": it expired", current, LeaseNotHeldException.Reason.EXPIRED);
        }
        if (token != null && current.token() > token) {
            return new LeaseExpiredException(
                    name, cannot + ": it was granted again", current, LeaseNotHeldException.Reason.GRANTED_AGAIN);
        }
        return new LeaseNotHeldException(
                name,
                cannot + ": " + (sameOwner ? "no such grant" : "not the owner"),
                current,
                sameOwner ? LeaseNotHeldException.Reason.NO_SUCH_GRANT : LeaseNotHeldException.Reason.OTHER_OWNER,
                null,
                null);
    }

    private static Instant now() {
        return Instant.now().truncatedTo(ChronoUnit.MICROS);
    }

    private static void check(String name, String owner) {
        checkName(name, "name");
        checkName(owner, "owner");
    }

    private static void checkLease(Lease lease) {
        if (lease == null) {
            throw new IllegalArgumentException("lease must not be null");
        }
        check(lease.name(), lease.owner());
    }

    /** 1 to 200 characters, not blank, no control characters or unpaired surrogates. */
    private static void checkName(String value, String what) {
        if (value == null
                || value.isBlank()
                || value.codePointCount(0, value.length()) > 200
                || value.codePoints()
                        .anyMatch(c -> Character.isISOControl(c)
                                || (c >= Character.MIN_SURROGATE && c <= Character.MAX_SURROGATE))) {
            throw new IllegalArgumentException("Lease " + what + " is not a valid name: " + value);
        }
    }

    private static void checkTtl(Duration ttl) {
        if (ttl == null || ttl.toNanos() < 1_000_000 || ttl.compareTo(MAX) > 0) {
            throw new IllegalArgumentException("Lease ttl must be 1 ms to 366 days, not " + ttl);
        }
    }
}
