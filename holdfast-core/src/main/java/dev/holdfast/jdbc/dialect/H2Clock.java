package dev.holdfast.jdbc.dialect;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

/**
 * The clock function behind {@link Dialect#H2}'s {@link Dialect#clock()}. H2's own
 * {@code CURRENT_TIMESTAMP} is fixed for a whole transaction; embedded H2 runs in this JVM, so
 * this JVM's clock is the database's clock. Public only because H2 calls it by name.
 */
public final class H2Clock {

    /** The SQL name of the function, created by {@link dev.holdfast.jdbc.SchemaInstaller}. */
    public static final String ALIAS = "HOLDFAST_CLOCK_TIMESTAMP";

    private H2Clock() {}

    /**
     * {@return this JVM's current time, at offset UTC, with microsecond precision where the platform has it}
     * H2 calls it under the name {@link #ALIAS}.
     */
    public static OffsetDateTime clockTimestamp() {
        // Not OffsetDateTime.now(UTC): it builds the offset's ZoneRules on every call, over half of
        // this function's time, and every lease statement calls it.
        Instant now = Instant.now();
        return OffsetDateTime.of(
                LocalDateTime.ofEpochSecond(now.getEpochSecond(), now.getNano(), ZoneOffset.UTC), ZoneOffset.UTC);
    }
}
