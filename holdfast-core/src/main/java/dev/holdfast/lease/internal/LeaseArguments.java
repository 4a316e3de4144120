package dev.holdfast.lease.internal;

import dev.holdfast.jdbc.internal.Names;
import org.jspecify.annotations.Nullable;

import java.time.Duration;

/** The checks every lease argument passes before any SQL runs: each failure an {@link IllegalArgumentException}. */
public final class LeaseArguments {

    public static final int MAX_NAME_LENGTH = 200;
    public static final long MIN_TTL_MILLIS = 1;
    public static final Duration MAX_DURATION = Duration.ofDays(366);

    private LeaseArguments() {}

    public static void checkName(String what, @Nullable String value) {
        Names.require(what, value, MAX_NAME_LENGTH);
    }

    /** Checks a name and an owner. */
    public static void checkNameAndOwner(@Nullable String name, @Nullable String owner) {
        checkName("Lease name", name);
        checkName("Lease owner", owner);
    }

    /** The TTL in microseconds, the unit every store works in. */
    public static long ttlMicros(@Nullable Duration ttl) {
        if (ttl == null) {
            throw new IllegalArgumentException("Lease ttl must not be null");
        }
        if (ttl.compareTo(MAX_DURATION) > 0) {
            throw new IllegalArgumentException(
                    "Lease ttl must be at most " + MAX_DURATION.toDays() + " days, not " + ttl);
        }
        if (ttl.isNegative() || ttl.toNanos() < MIN_TTL_MILLIS * 1_000_000) {
            throw new IllegalArgumentException("Lease ttl must be at least " + MIN_TTL_MILLIS + " ms, not " + ttl);
        }
        return ttl.toNanos() / 1000;
    }

    /** A kept-alive lease's TTL: as {@link #ttlMicros}, and at least 3 ms (it renews every ttl/3). */
    public static void checkKeptAliveTtl(@Nullable Duration ttl) {
        if (ttlMicros(ttl) < 3_000) { // 3 ms
            throw new IllegalArgumentException("A kept-alive lease needs a ttl of at least 3 ms, not " + ttl);
        }
    }

    public static long waitNanos(@Nullable Duration maxWait) {
        if (maxWait == null) {
            throw new IllegalArgumentException("maxWait must not be null");
        }
        if (maxWait.isNegative()) {
            throw new IllegalArgumentException("maxWait must not be negative, not " + maxWait);
        }
        if (maxWait.compareTo(MAX_DURATION) > 0) {
            throw new IllegalArgumentException(
                    "maxWait must be at most " + MAX_DURATION.toDays() + " days, not " + maxWait);
        }
        return maxWait.toNanos();
    }

    public static long heldAtLeastMicros(@Nullable Duration heldAtLeast) {
        if (heldAtLeast == null || heldAtLeast.isNegative() || heldAtLeast.compareTo(MAX_DURATION) > 0) {
            throw new IllegalArgumentException(
                    "heldAtLeast must be 0 to " + MAX_DURATION.toDays() + " days, not " + heldAtLeast);
        }
        return heldAtLeast.toNanos() / 1000;
    }

    /** In-memory hand-offs of one grant: 0 (off) to 10,000. */
    public static int cohortHandOffs(int max) {
        if (max < 0 || max > 10_000) {
            throw new IllegalArgumentException("cohortHandOffs must be 0 to 10000, not " + max);
        }
        return max;
    }
}
