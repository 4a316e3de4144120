package dev.holdfast.pessimistic;

import org.jspecify.annotations.Nullable;

import java.time.Instant;

/**
 * A database session that waits for a lock right now, with the sessions it waits for: an element of
 * {@link RowLockWaits#list(int)}. Every text is the database's own, as far as the reading role may
 * see it; what a database does not show is null.
 *
 * @param sessionId       the waiting session: PostgreSQL backend pid, MariaDB connection (thread)
 *                        id, H2 session id
 * @param user            the database user it logged in as
 * @param applicationName PostgreSQL {@code application_name}, H2 {@code CLIENT_INFO}; always null on
 *                        MariaDB (see {@link Blocker#applicationName()})
 * @param clientAddress   PostgreSQL {@code client_addr}, MariaDB {@code host:port}, H2
 *                        {@code CLIENT_ADDR}
 * @param waitingSince    when it began to wait: PostgreSQL {@code pg_locks.waitstart} (else the
 *                        statement's start), MariaDB {@code trx_wait_started} (whole seconds), H2 the
 *                        statement's start
 * @param state           what it is doing, in the database's words (as {@link Blocker#state()})
 * @param statement       the statement that waits, literals replaced by {@code ?}, never a bind value,
 *                        cut to {@value Blocker#MAX_STATEMENT_LENGTH} characters
 * @param blockers        the sessions it waits for, nearest first, chains followed as in a
 *                        {@link LockTimeoutException}; or why they are unknown
 */
public record RowLockWait(
        String sessionId,
        @Nullable String user,
        @Nullable String applicationName,
        @Nullable String clientAddress,
        @Nullable Instant waitingSince,
        @Nullable String state,
        @Nullable String statement,
        Blockers blockers) {

    /**
     * Cuts a longer {@code statement} to {@value Blocker#MAX_STATEMENT_LENGTH} characters (the last
     * one {@code …}); the other parts are kept as given.
     *
     * @param sessionId       the waiting session's id; not blank
     * @param user            the database user, or null
     * @param applicationName the client's application name, or null
     * @param clientAddress   the client's address, or null
     * @param waitingSince    when the session began to wait, or null
     * @param state           what the session is doing, or null
     * @param statement       the waiting statement with its literals replaced, or null
     * @param blockers        the sessions it waits for, or why they are unknown; not null
     * @throws IllegalArgumentException if {@code sessionId} is null or blank, or {@code blockers} null
     */
    public RowLockWait {
        if (sessionId == null || sessionId.isBlank() || blockers == null) {
            throw new IllegalArgumentException("sessionId must not be null or blank, blockers not null");
        }
        if (statement != null && statement.length() > Blocker.MAX_STATEMENT_LENGTH) {
            statement = statement.substring(0, Blocker.MAX_STATEMENT_LENGTH - 1) + "…";
        }
    }
}
