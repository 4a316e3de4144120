package dev.holdfast.pessimistic;

import org.jspecify.annotations.Nullable;

import java.time.Instant;

/**
 * One database session that blocked a row lock, as the database showed it while the lock waited:
 * an element of {@link Blockers}. Every text is the database's own, as far as the observing role
 * may see it; what a database does not keep is null.
 *
 * @param sessionId        the session: the PostgreSQL backend pid, the MariaDB connection (thread)
 *                         id, the H2 session id
 * @param blocks           the session this one blocks: the waiting session for a direct blocker,
 *                         else another blocker (the links of a chain)
 * @param user             the database user the session logged in as
 * @param applicationName  PostgreSQL {@code application_name}, H2 {@code CLIENT_INFO}; always null
 *                         on MariaDB, which keeps connection attributes only in the
 *                         {@code performance_schema} (off by default)
 * @param clientAddress    PostgreSQL {@code client_addr}, MariaDB {@code host:port}, H2
 *                         {@code CLIENT_ADDR}; null for a Unix socket or an embedded session
 * @param transactionStart when the session's transaction began: PostgreSQL {@code xact_start},
 *                         MariaDB {@code trx_started} (whole seconds); always null on H2, which does
 *                         not keep it
 * @param state            what the session was doing, in the database's words: PostgreSQL
 *                         {@code state} and any wait event ({@code idle in transaction},
 *                         {@code active, waiting for Lock/transactionid}), MariaDB {@code trx_state}
 *                         and command ({@code RUNNING, Sleep}), H2 {@code SESSION_STATE}
 * @param statement        the statement the session runs (on PostgreSQL, or ran last), with every
 *                         string and number literal replaced by {@code ?} and never a bind value,
 *                         cut to {@value #MAX_STATEMENT_LENGTH} characters; null if none is shown
 */
public record Blocker(
        String sessionId,
        String blocks,
        @Nullable String user,
        @Nullable String applicationName,
        @Nullable String clientAddress,
        @Nullable Instant transactionStart,
        @Nullable String state,
        @Nullable String statement) {

    /** The longest {@link #statement()}, in characters; a longer one is cut and ends in {@code …}. */
    public static final int MAX_STATEMENT_LENGTH = 200;

    /**
     * Cuts a longer {@code statement} to {@value #MAX_STATEMENT_LENGTH} characters (the last one
     * {@code …}); the other texts are kept as given.
     *
     * @param sessionId        the blocking session's id; not blank
     * @param blocks           the id of the session this one blocks; not blank
     * @param user             the database user, or null
     * @param applicationName  the client's application name, or null
     * @param clientAddress    the client's address, or null
     * @param transactionStart when the session's transaction began, or null
     * @param state            what the session was doing, or null
     * @param statement        the statement with its literals replaced, or null; a longer one than
     *                         {@value #MAX_STATEMENT_LENGTH} characters is cut
     * @throws IllegalArgumentException if {@code sessionId} or {@code blocks} is null or blank
     */
    public Blocker {
        if (sessionId == null || sessionId.isBlank() || blocks == null || blocks.isBlank()) {
            throw new IllegalArgumentException("sessionId and blocks must not be null or blank");
        }
        if (statement != null && statement.length() > MAX_STATEMENT_LENGTH) {
            statement = statement.substring(0, MAX_STATEMENT_LENGTH - 1) + "…";
        }
    }

    /** One line: id, whom it blocks (for a blocker in a chain) and what is known of it. */
    String describe(@Nullable String waitingSession) {
        StringBuilder s = new StringBuilder("session ").append(sessionId);
        if (!blocks.equals(waitingSession)) {
            s.append(" (blocking ").append(blocks).append(')');
        }
        s.append(" [");
        part(s, "user", user);
        part(s, "application", applicationName);
        part(s, "client", clientAddress);
        part(s, "transaction since", transactionStart == null ? null : transactionStart.toString());
        part(s, "state", state);
        part(s, "statement", statement == null ? null : '"' + statement + '"');
        return s.append(']').toString();
    }

    private static void part(StringBuilder s, String name, @Nullable String value) {
        if (value != null) {
            if (s.charAt(s.length() - 1) != '[') {
                s.append(", ");
            }
            s.append(name).append(' ').append(value);
        }
    }
}
