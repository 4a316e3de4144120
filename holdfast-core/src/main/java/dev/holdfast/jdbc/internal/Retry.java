package dev.holdfast.jdbc.internal;

import dev.holdfast.DatabaseException;
import dev.holdfast.internal.Failures;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.jdbc.dialect.SqlErrorKind;
import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.EnumSet;
import java.util.Set;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * Repeats a statement that lost a race and had no effect: two first inserts of one key (a unique
 * violation), a deadlock victim, a serialization failure. Each attempt runs on a connection of its
 * own, committing on its own ({@link Jdbc#autocommit(Connection, Jdbc.Work)}); the next attempt sees
 * the winner's row.
 *
 * @param kinds    the error kinds worth another attempt
 * @param attempts how many attempts in all, at least 1
 * @param onRetry  runs before each repeated attempt (a counter, for instance)
 */
public record Retry(Dialect dialect, Set<SqlErrorKind> kinds, int attempts, Runnable onRetry) {

    /** The races a single upsert or delete can lose without effect. */
    public static final Set<SqlErrorKind> RACES = Set.copyOf(
            EnumSet.of(SqlErrorKind.UNIQUE_VIOLATION, SqlErrorKind.DEADLOCK, SqlErrorKind.SERIALIZATION_FAILURE));

    public Retry {
        kinds = Set.copyOf(kinds);
        if (attempts < 1) {
            throw new IllegalArgumentException("attempts must be at least 1, not " + attempts);
        }
    }

    /**
     * Runs {@code work} on a borrowed connection (the first attempt on {@code first} if given, which
     * is closed), repeating it on a new connection after a retryable failure.
     *
     * @param what what is being done, asked only when the last attempt failed
     * @throws DatabaseException when an attempt fails otherwise, or the last one fails
     */
    public <T> T autocommit(
            DataSource dataSource, @Nullable Connection first, Supplier<String> what, Jdbc.Work<T> work) {
        for (int attempt = 1; ; attempt++) {
            Connection given = attempt == 1 ? first : null;
            try (Connection c = given != null ? given : dataSource.getConnection()) {
                return Jdbc.autocommit(c, work);
            } catch (SQLException e) {
                if (!kinds.contains(dialect.classify(e)) || attempt >= attempts) {
                    throw Failures.database(what.get(), e);
                }
                onRetry.run();
            }
        }
    }
}
