package dev.holdfast.lease.internal;

import dev.holdfast.jdbc.dialect.Dialect;

import java.util.List;

/**
 * The lease statements, one section per dialect (measured forms: {@code docs/database-facts.md},
 * lease upserts): SQL text, binding order and how to read the result, nothing else;
 * {@link LeaseStore} runs them.
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
public abstract class LeaseSql {

    /*
     * How a blocking acquire waits is the subclass: PgLeaseSql, notified (a release hands the lease to
     * the first waiter and notifies it), or a PollingLeaseSql (H2, MariaDB). Batches are a
     * BatchLeaseSql (PostgreSQL, MariaDB).
     */

    public final String table;
    public final Dialect dialect;

    public LeaseSql(String table, Dialect dialect) {
        this.table = table;
        this.dialect = dialect;
    }

    /**
     * The acquire: one statement that returns the grant's {@code token, acquired_at, expires_at}, or
     * no row if the lease is live (whoever holds it; with {@code reentrant}, unless the caller does,
     * which then extends it). Binds name, owner, ttl micros.
     */
    public abstract String acquireSql(boolean reentrant);

    /**
     * Whether the acquire returns the row's final state whatever happened, with its owner in column 4
     * and whether this statement granted it in column 5 (MariaDB), instead of no row when refused.
     */
    public boolean acquireReturnsFinalRow() {
        return false;
    }

    /** Removes a waiter that was granted (binds name, waiter): every database queues. */
    public final String leaveQueueSql() {
        return "DELETE FROM " + table + "_queue WHERE name = ? AND owner = ?";
    }

    /** Removes {@code waiter}'s queue entry on {@code c} ({@link #leaveQueueSql()}; also on a MariaDB wake-up connection). */
    final void leaveQueue(java.sql.Connection c, String name, String waiter) throws java.sql.SQLException {
        try (java.sql.PreparedStatement ps = c.prepareStatement(leaveQueueSql())) {
            ps.setString(1, name);
            ps.setString(2, waiter);
            ps.executeUpdate();
        }
    }

    /**
     * Expires the caller's live grant (one row matched, or none). Binds [held-at-least micros twice,]
     * name, owner[, token]. On PostgreSQL it returns the released row's token and whether a waiter may
     * be queued, and the runner then hands off ({@link PgLeaseSql#handOffSql}).
     *
     * @param withToken    whether only the grant with a given token is matched (else any of the owner's)
     * @param heldAtLeast  whether the lease stays held until a minimum hold from its grant ({@link #releasedExpiry})
     * @param relaxed         PostgreSQL: commit without waiting for the WAL flush (ignored elsewhere)
     */
    public String releaseSql(boolean withToken, boolean heldAtLeast, boolean relaxed) {
        return "UPDATE " + table + " SET broken_by = NULL, broken_at = NULL, expires_at = "
                + releasedExpiry(heldAtLeast)
                + " WHERE name = ? AND owner = ?" + (withToken ? " AND token = ?" : "")
                + " AND expires_at > " + dialect.clock();
    }

    /**
     * The expiry a release writes: {@code acquired_at} (released), or with a minimum hold, the later
     * of that and now: {@code acquired_at + min} while that is still ahead.
     */
    public String releasedExpiry(boolean heldAtLeast) {
        if (!heldAtLeast) {
            return "acquired_at";
        }
        String until = plusMicros("acquired_at");
        return "CASE WHEN " + until + " > " + dialect.clock() + " THEN " + until + " ELSE acquired_at END";
    }

    /** {@code column} plus a bound number of microseconds. */
    public abstract String plusMicros(String column);

    /**
     * The renewal: extends the caller's live grant (same token). Binds ttl micros, name, owner, token;
     * returns the new expiry, or no row if the lease is not held ({@link #renewReturnsExpiry()}).
     */
    public abstract String renewSql();

    /** Whether {@link #renewSql()} returns the new expiry; else it returns a count, and the row is read after. */
    public boolean renewReturnsExpiry() {
        return true;
    }

    /**
     * A cohort hand-off's reservation ({@link CohortHandOffs}): moves the caller's live grant's token up
     * by a bound count (the tokens its own threads will take) and extends it to at least a bound
     * TTL from now, never shortening it. Binds tokens, ttl micros, name, owner, token. Where
     * {@link #renewReturnsExpiry()}, returns the new token, the expiry and the database's now, or no
     * row if the grant is not held; else it returns a count and {@link #reservedSql()} reads after.
     */
    public String reserveSql() {
        return "UPDATE " + table + " SET token = token + ?, expires_at = GREATEST(expires_at, "
                + plusMicros(dialect.clock()) + ") WHERE name = ? AND owner = ? AND token = ? AND expires_at > "
                + dialect.clock();
    }

    /** After {@link #reserveSql()} where it returns a count: the row's token and expiry, and now. Binds name, owner. */
    public String reservedSql() {
        return "SELECT token, expires_at, " + dialect.clock() + " FROM " + table + " WHERE name = ? AND owner = ?";
    }

    /** The columns of a {@link LeaseRow}, in its order. */
    private static final String LEASE_COLUMNS = "name, owner, token, acquired_at, expires_at";

    /** The row of a name (binds name): {@link #LEASE_COLUMNS}. */
    public String readSql() {
        return "SELECT " + LEASE_COLUMNS + " FROM " + table + " WHERE name = ?";
    }

    /**
     * The row of a name for diagnosing a refused release or renewal (binds name): {@link #LEASE_COLUMNS},
     * then who broke its last grant and when (null if nobody did).
     */
    public String diagnoseSql() {
        return "SELECT " + LEASE_COLUMNS + ", broken_by, broken_at FROM " + table + " WHERE name = ?";
    }

    /**
     * What a blocking acquire that gave up saw, in one read on that path only: the live grant's
     * {@code owner, token, acquired_at, expires_at} (nulls if the lease was free), the database's now,
     * and how many live waiters had queued before the caller's entry (every live one if it had none,
     * or it lapsed), by the order in which the queue grants. Binds {@link #timeoutBinds}.
     */
    public String timeoutSql() {
        String queue = table + "_queue";
        String order = queueOrder();
        return "SELECT l.owner, l.token, l.acquired_at, l.expires_at, n.t, (SELECT COUNT(*) FROM " + queue + " q"
                + " WHERE q.name = ? AND q.owner <> ? AND q.wait_until > n.t AND q." + order + " < COALESCE((SELECT m."
                + order + " FROM " + queue + " m WHERE m.name = ? AND m.owner = ? AND m.wait_until > n.t), "
                + lastInQueue() + "))"
                + " FROM (SELECT " + dialect.clock() + " AS t) n LEFT JOIN " + table + " l ON l.name = ?"
                + " AND l.expires_at > n.t" + notHandedTo();
    }

    /** What {@link #timeoutSql()} binds, in order: the caller's waiter id ("" if it had no queue entry). */
    public List<String> timeoutBinds(String name, String waiter) {
        return List.of(name, waiter, name, waiter, name);
    }

    /** The queue column that orders waiters: {@code queued_at} (H2, MariaDB). */
    String queueOrder() {
        return "queued_at";
    }

    /** A value of {@link #queueOrder()} after every entry's: the place of a caller with no live entry. */
    abstract String lastInQueue();

    /** A further condition on the live row where a grant can be handed to a waiter that gives up (PostgreSQL). */
    String notHandedTo() {
        return "";
    }

    /** Leases that are live now, by name, as {@link #readSql()} reads them. */
    public String listLiveSql() {
        return "SELECT " + LEASE_COLUMNS + " FROM " + table + " WHERE expires_at > " + dialect.clock()
                + " ORDER BY name";
    }

    /**
     * Live leases a page at a time, by name, as {@link #readSql()} reads them. Binds [the last name of
     * the previous page, when {@code after}], the limit.
     */
    public String livePageSql(boolean after) {
        return "SELECT " + LEASE_COLUMNS + " FROM " + table + " WHERE expires_at > " + dialect.clock()
                + (after ? " AND name > ?" : "") + " ORDER BY name LIMIT ?";
    }

    /**
     * The live waiters of the queue, by name and place (1: next to be granted): name, place, lease
     * owner (null where the queue does not keep it), queued at (null where it keeps a sequence
     * instead), wait until. Binds [name, when {@code byName}][, after name twice and after place, when
     * {@code after}], the limit.
     */
    public String waitersSql(boolean byName, boolean after) {
        return "SELECT name, place, lease_owner, queued_at, wait_until FROM (SELECT name, ROW_NUMBER() OVER"
                + " (PARTITION BY name ORDER BY " + arrivalOrder() + ") AS place, " + queueOwnerAndTime()
                + ", wait_until FROM " + table + "_queue WHERE wait_until > " + dialect.clock()
                + (byName ? " AND name = ?" : "") + ") q"
                + (after ? " WHERE (name > ? OR (name = ? AND place > ?))" : "") + " ORDER BY name, place LIMIT ?";
    }

    /** The queue's arrival order, for ORDER BY (H2, MariaDB: the time of queueing, then the waiter id). */
    protected String arrivalOrder() {
        return "queued_at, owner";
    }

    /** The lease owner and the time of queueing, as the queue keeps them (H2, MariaDB: no owner). */
    protected String queueOwnerAndTime() {
        return "CAST(NULL AS VARCHAR(200)) AS lease_owner, queued_at";
    }

    /**
     * Expires a live lease whoever holds it, recording who broke it and when. Binds by (an empty
     * string when not named), name; then hands off like a release (PostgreSQL).
     */
    public String forceReleaseSql() {
        return "UPDATE " + table + " SET broken_by = ?, broken_at = " + dialect.clock()
                + ", expires_at = acquired_at WHERE name = ? AND expires_at > " + dialect.clock();
    }
}
