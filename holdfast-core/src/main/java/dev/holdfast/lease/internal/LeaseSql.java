package dev.holdfast.lease;

import dev.holdfast.jdbc.dialect.Dialect;
import org.jspecify.annotations.Nullable;

import java.util.List;

/**
 * The lease statements, one section per dialect (measured forms: {@code docs/database-facts.md},
 * lease upserts): SQL text, binding order and how to read the result, nothing else;
 * {@link LeaseJdbc} runs them.
 *
 * <p>Rules every acquire statement implements, in one statement, by database time {@code now}:
 * <ul>
 *   <li>granted if there is no row, or the row has expired ({@code expires_at <= now}; a released row
 *       has); a live row refuses, even the caller's own: each grant is exclusive to one call;</li>
 *   <li>the re-entrant form ({@code tryLock}) also grants the owner of the live row, as a
 *       renewal (same token, same {@code acquired_at});</li>
 *   <li>token: {@code +1} when the row had expired (a new grant), unchanged on re-entry, 1 for a new
 *       row — so any new grant increases it; on PostgreSQL a new grant's token is also at least
 *       {@code (timeline - 1) << 40}, so after a promotion every grant outranks every grant made
 *       before it, even one the standby never received;</li>
 *   <li>{@code acquired_at} moves only with a new grant;</li>
 *   <li>no statement leaves {@code expires_at} before {@code acquired_at}: a renewal or extension whose
 *       "now" was read before it waited for the row lock never ends the grant before it began. With
 *       the first rule this orders grant times by token: a new grant's {@code acquired_at} (its
 *       now) is at or after the previous grant's expiry, so at or after its {@code acquired_at}.</li>
 * </ul>
 * A release never deletes the row (the token must survive): it sets {@code expires_at = acquired_at}.
 */
abstract class LeaseSql {

    final String table;
    final Dialect dialect;

    LeaseSql(String table, Dialect dialect) {
        this.table = table;
        this.dialect = dialect;
    }

    /**
     * The acquire: one statement that returns the grant's {@code token, acquired_at, expires_at}, or
     * no row if the lease is live (whoever holds it; with {@code reentrant}, unless the caller does,
     * which then extends it). Binds name, owner, ttl micros.
     */
    abstract String acquireSql(boolean reentrant);

    /**
     * Whether the acquire returns the row's final state whatever happened, with its owner in column 4
     * and whether this statement granted it in column 5 (MariaDB), instead of no row when refused.
     */
    boolean acquireReturnsFinalRow() {
        return false;
    }

    /**
     * The blocking acquire's attempt, the waiter queue kept in the same statement (PostgreSQL: see
     * {@link PostgreSql}); null where it takes statements of their own ({@link #acquireQueuedSql()}). Binds name,
     * owner, ttl micros, waiter (three times), name, waiter, then for the queue entry name, waiter, queue micros,
     * owner, ttl micros, listener pid; returns as the acquire.
     */
    @Nullable String acquireOrQueueSql() {
        return null;
    }

    /** Removes a waiter that was granted (binds name, waiter): every database queues. */
    final String leaveQueueSql() {
        return "DELETE FROM " + table + "_queue WHERE name = ? AND owner = ?";
    }

    /**
     * Removes a waiter that gave up: {@link #leaveQueueSql()}, or where releases hand the lease to
     * the first waiter (PostgreSQL), statements that also give back a grant handed to it meanwhile.
     * Binds {@link #giveUpBinds}.
     */
    String giveUpSql() {
        return leaveQueueSql();
    }

    /** What {@link #giveUpSql()} binds, in order. */
    List<String> giveUpBinds(String name, String waiter) {
        return List.of(name, waiter);
    }

    /**
     * Where the queue takes more than one statement (H2, MariaDB: waiters poll): the exclusive
     * acquire that also refuses while a live waiter queued before this one (binds name, owner,
     * ttl micros, then {@link #queuedBinds}); returns as the acquire. The
     * runner then leaves the queue on a grant, else joins it ({@link #joinQueueSql()}). Null where the
     * queue is one statement ({@link #acquireOrQueueSql()}).
     */
    @Nullable String acquireQueuedSql() {
        return null;
    }

    /** What {@link #acquireQueuedSql()} binds after name, owner and ttl micros, in order. */
    List<String> queuedBinds(String name, String waiter) {
        return List.of();
    }

    /**
     * Joins the queue, or refreshes this waiter's entry (an entry that had lapsed goes to the back).
     * Binds name, waiter, entry lifetime micros.
     */
    @Nullable String joinQueueSql() {
        return null;
    }

    /** Whether this dialect wakes waiters with a notification (else they poll). */
    boolean notifiesWaiters() {
        return false;
    }

    /**
     * Expires the caller's live grant (one row matched, or none). Binds [held-at-least micros twice,]
     * name, owner[, token]. Where {@link #releaseReportsWaiters()}, it returns the released row's token
     * and whether a waiter may be queued, and the runner then {@link #handOffSql() hands off}.
     *
     * @param withToken    whether only the grant with a given token is matched (else any of the owner's)
     * @param heldAtLeast  whether the lease stays held until a minimum hold from its grant ({@link #releasedExpiry})
     * @param fast         PostgreSQL: commit without waiting for the WAL flush (ignored elsewhere)
     */
    String releaseSql(boolean withToken, boolean heldAtLeast, boolean fast) {
        return "UPDATE " + table + " SET broken_by = NULL, broken_at = NULL, expires_at = " + releasedExpiry(heldAtLeast)
                + " WHERE name = ? AND owner = ?" + (withToken ? " AND token = ?" : "")
                + " AND expires_at > " + dialect.clock();
    }

    /**
     * Whether a release or force-release returns the row it changed (column 1) and whether a waiter
     * may be queued for it (column 2, from the lease row itself), instead of only a count.
     */
    boolean releaseReportsWaiters() {
        return false;
    }

    /**
     * Where releases hand the lease to the first waiter (PostgreSQL): the statements the runner sends
     * after a release or force-release that reported waiters; null elsewhere. Binds name three times.
     */
    @Nullable String handOffSql() {
        return null;
    }

    /**
     * Where releases hand off: {@code update} (a release or force-release) followed by the hand-off
     * in the same round trip, which hands off only if the update matched; null elsewhere.
     */
    @Nullable String withHandOffSql(String update) {
        return null;
    }

    /**
     * The expiry a release writes: {@code acquired_at} (released), or with a minimum hold, the later
     * of that and now: {@code acquired_at + min} while that is still ahead.
     */
    String releasedExpiry(boolean heldAtLeast) {
        if (!heldAtLeast) {
            return "acquired_at";
        }
        String until = plusMicros("acquired_at");
        return "CASE WHEN " + until + " > " + dialect.clock() + " THEN " + until + " ELSE acquired_at END";
    }

    /** {@code column} plus a bound number of microseconds. */
    abstract String plusMicros(String column);

    /**
     * The renewal: extends the caller's live grant (same token). Binds ttl micros, name, owner, token;
     * returns the new expiry, or no row if the lease is not held ({@link #renewReturnsExpiry()}).
     */
    abstract String renewSql();

    /** Whether {@link #renewSql()} returns the new expiry; else it returns a count, and the row is read after. */
    boolean renewReturnsExpiry() {
        return true;
    }

    /**
     * A cohort hand-off's reservation ({@link CohortHandOffs}): moves the caller's live grant's token up
     * by a bound count (the tokens its own threads will take) and extends it to at least a bound
     * TTL from now, never shortening it. Binds tokens, ttl micros, name, owner, token. Where
     * {@link #renewReturnsExpiry()}, returns the new token, the expiry and the database's now, or no
     * row if the grant is not held; else it returns a count and {@link #reservedSql()} reads after.
     */
    String reserveSql() {
        return "UPDATE " + table + " SET token = token + ?, expires_at = GREATEST(expires_at, "
                + plusMicros(dialect.clock()) + ") WHERE name = ? AND owner = ? AND token = ? AND expires_at > "
                + dialect.clock();
    }

    /** After {@link #reserveSql()} where it returns a count: the row's token and expiry, and now. Binds name, owner. */
    String reservedSql() {
        return "SELECT token, expires_at, " + dialect.clock() + " FROM " + table + " WHERE name = ? AND owner = ?";
    }

    /** The columns of a {@link Lease}, in its order. */
    private static final String LEASE_COLUMNS = "name, owner, token, acquired_at, expires_at";

    /** The row of a name (binds name): {@link #LEASE_COLUMNS}. */
    String readSql() {
        return "SELECT " + LEASE_COLUMNS + " FROM " + table + " WHERE name = ?";
    }

    /**
     * The row of a name for diagnosing a refused release or renewal (binds name): {@link #LEASE_COLUMNS},
     * then who broke its last grant and when (null if nobody did).
     */
    String diagnoseSql() {
        return "SELECT " + LEASE_COLUMNS + ", broken_by, broken_at FROM " + table + " WHERE name = ?";
    }

    /** Leases that are live now, by name, as {@link #readSql()} reads them. */
    String listLiveSql() {
        return "SELECT " + LEASE_COLUMNS + " FROM " + table + " WHERE expires_at > " + dialect.clock() + " ORDER BY name";
    }

    /**
     * Expires a live lease whoever holds it, recording who broke it and when. Binds by (an empty
     * string when not named), name; then {@link #handOffSql hands off} like a release.
     */
    String forceReleaseSql() {
        return "UPDATE " + table + " SET broken_by = ?, broken_at = " + dialect.clock()
                + ", expires_at = acquired_at WHERE name = ? AND expires_at > " + dialect.clock();
    }

    /**
     * Where calls are batched ({@link Batcher}): the exclusive acquire of {@code rows} leases in one
     * statement, by the rules of {@link #acquireSql} for each row, in name order (the caller sorts
     * them: two batches lock rows in the same order). Returns a row for each grant only (PostgreSQL)
     * or each row's final state ({@link #acquireReturnsFinalRow}), with the name first, then as the
     * acquire. Binds as {@link #bindsArrays}. Null where calls are not batched (H2).
     */
    @Nullable String acquireAllSql(int rows) {
        return null;
    }

    /**
     * Where calls are batched: the release of {@code rows} grants in one statement (each matched by
     * name, owner and token, live), locking the rows in name order; returns the name of each
     * released row and whether a waiter may be queued for it ({@link #releaseReportsWaiters}).
     * Binds as {@link #bindsArrays}, on MariaDB after the names alone.
     *
     * @param fast PostgreSQL: commit without waiting for the WAL flush (ignored elsewhere)
     */
    @Nullable String releaseAllSql(int rows, boolean fast) {
        return null;
    }

    /**
     * How batch statements bind: three arrays (names, owners, then ttl micros or tokens) where
     * true, else the three values of each row in turn.
     */
    boolean bindsArrays() {
        return false;
    }
}
