package dev.holdfast.pessimistic.offline;

import java.time.Duration;

/** Checks of the durations a lock is taken or extended for, before any SQL. */
final class Durations {

    private Durations() {}

    static Duration positive(String what, Duration value, Duration max) {
        if (value == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        if (value.compareTo(Duration.ofMillis(1)) < 0) {
            throw new IllegalArgumentException(what + " must be at least 1 ms, not " + value);
        }
        if (value.compareTo(max) > 0) {
            throw new IllegalArgumentException(what + " " + value + " exceeds the maximum " + max);
        }
        return value;
    }

    static long micros(Duration d) {
        return d.toNanos() / 1_000;
    }
}
