package dev.holdfast.lease;

import dev.holdfast.jdbc.dialect.Dialect;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;


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

    static LeaseSql forDialect(Dialect dialect, String table) {
        return switch (dialect) {
            case H2 -> new H2(table);
            case POSTGRESQL -> new PostgreSql(table);
            case MARIADB -> new MariaDb(table);
        };
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
    String acquireOrQueueSql() {
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
    String acquireQueuedSql() {
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
    String joinQueueSql() {
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
    String handOffSql() {
        return null;
    }

    /**
     * Where releases hand off: {@code update} (a release or force-release) followed by the hand-off
     * in the same round trip, which hands off only if the update matched; null elsewhere.
     */
    String withHandOffSql(String update) {
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
     * A local hand-off's reservation ({@link LocalHandOffs}): moves the caller's live grant's token up
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
    String acquireAllSql(int rows) {
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
    String releaseAllSql(int rows, boolean fast) {
        return null;
    }

    /**
     * How batch statements bind: three arrays (names, owners, then ttl micros or tokens) where
     * true, else the three values of each row in turn.
     */
    boolean bindsArrays() {
        return false;
    }

    /**
     * H2: {@code MERGE} inside {@code FINAL TABLE}: zero rows means not granted. {@code SET}
     * expressions see the old row, so token and acquired_at can test the old expiry directly. The
     * "now" is computed once, in the source row.
     */
    static final class H2 extends LeaseSql {
        private final String acquire;
        private final String reenter;
        private final String acquireQueued;
        private final String joinQueue;
        private final String renew;

        H2(String table) {
            super(table, Dialect.H2);
            String now = Dialect.H2.clock();
            String queue = table + "_queue";
            acquire = merge(table, now, "", "t.expires_at <= s.now", false);
            reenter = merge(table, now, "", "(t.expires_at <= s.now OR t.owner = s.owner)", true);
            // A free lease goes to this waiter only if no live waiter queued before it.
            acquireQueued = merge(table, now, ", CAST(? AS VARCHAR) AS waiter", "t.expires_at <= s.now"
                    + " AND NOT EXISTS (SELECT 1 FROM " + queue + " q WHERE q.name = s.name AND q.owner <> s.waiter"
                    + " AND q.wait_until > s.now AND q.queued_at < COALESCE((SELECT m.queued_at FROM " + queue + " m"
                    + " WHERE m.name = s.name AND m.owner = s.waiter AND m.wait_until > s.now),"
                    + " TIMESTAMP WITH TIME ZONE '9999-12-31 00:00:00+00'))", false);
            joinQueue = "MERGE INTO " + queue + " q USING (SELECT CAST(? AS VARCHAR) AS name, CAST(? AS VARCHAR) AS owner,"
                    + " " + now + " AS now, CAST(? AS BIGINT) AS micros) s ON q.name = s.name AND q.owner = s.owner"
                    + " WHEN MATCHED THEN UPDATE SET queued_at = CASE WHEN q.wait_until <= s.now THEN s.now ELSE q.queued_at END,"
                    + " wait_until = DATEADD(MICROSECOND, s.micros, s.now)"
                    + " WHEN NOT MATCHED THEN INSERT (name, owner, queued_at, wait_until)"
                    + " VALUES (s.name, s.owner, s.now, DATEADD(MICROSECOND, s.micros, s.now))";
            renew = "SELECT expires_at FROM FINAL TABLE (UPDATE " + table
                    + " SET expires_at = DATEADD(MICROSECOND, CAST(? AS BIGINT), " + now + ")"
                    + " WHERE name = ? AND owner = ? AND token = ? AND expires_at > " + now + ")";
        }

        /**
         * The acquire, granting a matched row where {@code grants} holds; {@code more} adds source columns.
         * Only the re-entrant form ({@code renews}) can match a live row, so only it needs the {@code CASE}s.
         */
        private static String merge(String table, String now, String more, String grants, boolean renews) {
            return "SELECT token, acquired_at, expires_at FROM FINAL TABLE (MERGE INTO " + table + " t"
                    // Unsized casts: a sized CAST would truncate silently, where the column refuses.
                    + " USING (SELECT CAST(? AS VARCHAR) AS name, CAST(? AS VARCHAR) AS owner,"
                    + " " + now + " AS now, CAST(? AS BIGINT) AS ttl" + more + ") s ON t.name = s.name"
                    + " WHEN MATCHED AND " + grants + " THEN UPDATE SET"
                    + (renews ? " token = CASE WHEN t.expires_at <= s.now THEN t.token + 1 ELSE t.token END,"
                            + " acquired_at = CASE WHEN t.expires_at <= s.now THEN s.now ELSE t.acquired_at END,"
                            : " token = t.token + 1, acquired_at = s.now,")
                    + " owner = s.owner, expires_at = "
                    // A renewal never ends before its grant began: "now" may be from before a wait for the row.
                    // (For a new grant the old acquired_at is at or before s.now: GREATEST changes nothing.)
                    + (renews ? "GREATEST(DATEADD(MICROSECOND, s.ttl, s.now), t.acquired_at)" : "DATEADD(MICROSECOND, s.ttl, s.now)")
                    + " WHEN NOT MATCHED THEN INSERT (name, owner, token, acquired_at, expires_at)"
                    + " VALUES (s.name, s.owner, 1, s.now, DATEADD(MICROSECOND, s.ttl, s.now)))";
        }

        @Override
        String acquireSql(boolean reentrant) {
            return reentrant ? reenter : acquire;
        }

        @Override
        String acquireQueuedSql() {
            return acquireQueued;
        }

        /** The waiter id, in the source row. */
        @Override
        List<String> queuedBinds(String name, String waiter) {
            return List.of(waiter);
        }

        @Override
        String joinQueueSql() {
            return joinQueue;
        }

        @Override
        String plusMicros(String column) {
            return Dialect.H2.plusMicros(column, "CAST(? AS BIGINT)");
        }

        @Override
        String renewSql() {
            return renew;
        }

        @Override
        String reserveSql() {
            return "SELECT token, expires_at, " + dialect.clock() + " FROM FINAL TABLE (" + super.reserveSql() + ")";
        }
    }

    /**
     * PostgreSQL: {@code INSERT … ON CONFLICT DO UPDATE … WHERE … RETURNING}: zero rows means not
     * granted. "Now" is {@code clock_timestamp()} taken once, in the inserted row
     * ({@code EXCLUDED.acquired_at}); if the statement then waits for the row lock, that "now" is a
     * little early, which can only refuse a grant, never allow one too soon. A live row that the
     * statement extends (a re-entry, or a waiter picking up a grant handed to it) is extended from
     * {@code clock_timestamp()} read after the row lock: from the early "now" it could end before
     * the grant began, and a later grant could then begin before it (seen under load: a waiter's
     * attempt read its now, waited more than the TTL for the row while a release handed it the
     * lease, and cut that grant's expiry to before its {@code acquired_at}).
     *
     * <p>The waiter queue ({@code <table>_queue}): a blocking acquire that fails enqueues itself in
     * the same statement, with what it would be granted (its owner, TTL) and the backend pid of the
     * listener that delivers its notifications. A free lease goes to a blocking caller only if no live
     * waiter queued before it, and a release that frees the lease, learning from its own row that
     * someone waits, hands it to the first live waiter ({@link #handOffSql}) and notifies it with the grant, so each waiter makes one
     * failed attempt per grant and none to take it, and the releasing worker cannot barge ahead of
     * the queue. Queue entries carry a short {@code wait_until} that waiters refresh, so a crashed
     * waiter stops counting soon. The queue's {@code owner} column holds the <em>waiter id</em> of one
     * {@code lock} call (128 random bits, base64url), not the lease owner: concurrent calls of one
     * owner are separate waiters with their own place, entry and notification (payload
     * {@code <length of name>:<name><waiter id>}, then the grant).
     *
     * <p>Fast release: {@code set_config('synchronous_commit', 'off', true)} in the release's own
     * auto-commit statement, so its commit does not wait for the WAL flush; the setting ends with
     * that transaction and the session keeps its own. Safe because a lost release (crash before the
     * flush) only leaves the lease to expire by its TTL, and any grant that relied on the release
     * (an acquire, or the hand-off right after it) commits durably, which flushes the WAL up to and
     * including the release.
     */
    static final class PostgreSql extends LeaseSql {
        /**
         * Grants and renewals are durable whatever the server, database, role or session says: this
         * condition, evaluated inside the statement, raises {@code synchronous_commit} to {@code on}
         * for the statement's own transaction if it was {@code off} or {@code local}, and keeps a
         * stronger setting ({@code remote_write}, {@code remote_apply}). Transaction-local: the
         * session's setting is back after the commit.
         */
        static final String DURABLE_LEVEL = "CASE WHEN current_setting('synchronous_commit') IN ('off', 'local')"
                + " THEN 'on' ELSE current_setting('synchronous_commit') END";
        /**
         * A transaction-local setting that the combined release sets when it matched, so that the
         * hand-off sent in its round trip does nothing after a refused release.
         */
        static final String RELEASED = "holdfast.released";
        static final String DURABLE = "set_config('synchronous_commit', " + DURABLE_LEVEL + ", true) IS NOT NULL";

        /**
         * The first key of the advisory lock by which a listener says it is alive: a listening
         * connection holds {@code (LISTENER_LOCK_KEY, its backend pid)} in exclusive session mode
         * while it listens ({@link #LISTENER_LOCK}), and a hand-off grants only to a waiter whose
         * listener's lock cannot be taken in shared mode ({@link #listenerAlive}). The two-key form
         * is a lock space of its own, apart from the one-{@code bigint} form; 0x486f6c64 is "Hold".
         * Cheaper than asking {@code pg_stat_get_activity(pid)}, which copies every backend's status
         * first (0.29–0.41 ms a call against 0.04–0.05 ms for a whole {@code SELECT} of the lock, pgbench,
         * one client), and narrower: an ordinary backend that took over a dead listener's pid, or a
         * connection that stopped listening and went back to its pool, does not hold it. (The key does
         * not name the table: a dead listener's pid taken over by another listener of this database
         * still reads as alive, as any live pid did before; its waiter then takes the grant at its
         * next attempt, from {@code handed_to}.)
         */
        static final int LISTENER_LOCK_KEY = 0x486f6c64;
        /**
         * Taken by a listener connection before its {@code LISTEN}: whether it got the lock, and the
         * backend pid it took it for (the one to publish; a pooler between may report another at
         * connect). False while a transaction that checked this pid when it was a dead listener's
         * still runs (the listener tries again: such a transaction may be an application's, open for
         * long).
         */
        static final String LISTENER_LOCK = "SELECT pg_try_advisory_lock(" + LISTENER_LOCK_KEY + ", pg_backend_pid()),"
                + " pg_backend_pid()";
        /** Given back before the listener connection goes back to its pool. */
        static final String LISTENER_UNLOCK = "SELECT pg_advisory_unlock(" + LISTENER_LOCK_KEY + ", pg_backend_pid())";
        /**
         * True while the listener with backend pid {@code pid} (an SQL expression) listens, null for no listener. Its
         * cost: if that listener is gone, the shared lock this takes stays to the end of the
         * transaction (a transaction-level lock, so that no error can leave it on a pooled connection),
         * and a listener that takes the pid over meanwhile starts listening only after that. (A session
         * never conflicts with itself: the check must not run on the listener's own connection, and
         * never does.)
         */
        static String listenerAlive(String pid) {
            return "NOT pg_try_advisory_xact_lock_shared(" + LISTENER_LOCK_KEY + ", " + pid + ")";
        }

        /** Bits below the timeline in a token: 2^40 grants per name per timeline. */
        static final int TIMELINE_SHIFT = 40;

        /**
         * The smallest token this server may grant: {@code (timeline - 1) << 40}, read in the
         * acquire statement itself. The timeline is the one WAL is inserted on now, the first 8 hex
         * digits of {@code pg_walfile_name(pg_current_wal_lsn())} (both callable by any role, and
         * an error during recovery, where no grant can be written anyway); a promotion raises it
         * before the new primary accepts its first write. {@code pg_control_checkpoint()} would
         * not do: it reports the old timeline until the end-of-recovery checkpoint (measured,
         * PostgreSQL 15).
         */
        static final String FIRST_TOKEN = "((('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))"
                + "::bit(32)::int::bigint - 1) << " + TIMELINE_SHIFT + ")";

        private final String queue;
        /** {@link #stemSql} of this table. */
        private final String stem;
        private final String acquire;
        private final String reenter;
        private final String acquireOrQueue;
        private final String acquireAll;
        private final String handOff;
        /** {@link #handOffSql} that does nothing unless this transaction released the lease ({@link #RELEASED}). */
        private final String handOffIfReleased;
        /** Locks the lease row first, as every statement does before queue rows: nothing deadlocks. Binds name. */
        private final String lockRow;
        private final String giveUp;
        private final String renew;

        PostgreSql(String table) {
            super(table, Dialect.POSTGRESQL);
            this.queue = table + "_queue";
            this.stem = stemSql(table);
            String insert = "INSERT INTO " + table + " AS l (name, owner, token, acquired_at, expires_at)"
                    + " SELECT ?, ?, GREATEST(1, n.e), n.t, n.t + ? * interval '1 microsecond' FROM ";
            String update = " ON CONFLICT (name) DO UPDATE SET"
                    + " token = CASE WHEN l.expires_at <= EXCLUDED.acquired_at"
                    + " THEN GREATEST(l.token + 1, EXCLUDED.token) ELSE l.token END,"
                    + " acquired_at = CASE WHEN l.expires_at <= EXCLUDED.acquired_at THEN EXCLUDED.acquired_at"
                    + " ELSE l.acquired_at END,"
                    + " owner = EXCLUDED.owner,"
                    // A live row (a re-entry, or a waiter picking up a grant handed to it) is extended
                    // from now after the row lock: the statement's own "now" may be from before a long
                    // wait for that lock, and would shorten the grant, even to before its acquired_at.
                    + " expires_at = CASE WHEN l.expires_at <= EXCLUDED.acquired_at THEN EXCLUDED.expires_at"
                    + " ELSE clock_timestamp() + (EXCLUDED.expires_at - EXCLUDED.acquired_at) END, handed_to = NULL";
            String returning = " RETURNING l.token, l.acquired_at, l.expires_at";
            String now = "(SELECT clock_timestamp() AS t, " + FIRST_TOKEN + " AS e WHERE " + DURABLE + ") n";
            acquire = insert + now + update
                    + " WHERE l.expires_at <= EXCLUDED.acquired_at" + returning;
            reenter = insert + now + update
                    + " WHERE l.expires_at <= EXCLUDED.acquired_at OR l.owner = EXCLUDED.owner" + returning;
            // A waiter's attempt also picks up a grant a release handed to it (handed_to), should it
            // have missed the notification: that grant is live and its own, and is extended.
            acquireOrQueue = "WITH n AS (SELECT clock_timestamp() AS t, " + FIRST_TOKEN + " AS e WHERE " + DURABLE + "),"
                    + " a AS (" + insert + "n" + update
                    + " WHERE (l.expires_at <= EXCLUDED.acquired_at AND NOT EXISTS (SELECT 1 FROM " + queue + " q"
                    + " WHERE q.name = EXCLUDED.name AND q.owner <> ?"
                    + " AND q.wait_until > EXCLUDED.acquired_at AND q.seq < COALESCE((SELECT m.seq FROM " + queue + " m"
                    + " WHERE m.name = EXCLUDED.name AND m.owner = ?"
                    + " AND m.wait_until > EXCLUDED.acquired_at), 9223372036854775807)))"
                    + " OR (l.handed_to = ? AND l.owner = EXCLUDED.owner AND l.expires_at > EXCLUDED.acquired_at)"
                    + returning + "),"
                    + " d AS (DELETE FROM " + queue + " WHERE name = ? AND owner = ? AND EXISTS (SELECT 1 FROM a)),"
                    + " e AS (INSERT INTO " + queue + " AS w (name, owner, wait_until, lease_owner, ttl_micros, listener)"
                    + " SELECT ?, ?, n.t + ? * interval '1 microsecond', ?, ?, ? FROM n WHERE NOT EXISTS (SELECT 1 FROM a)"
                    + " ON CONFLICT (name, owner) DO UPDATE SET wait_until = EXCLUDED.wait_until,"
                    + " lease_owner = EXCLUDED.lease_owner, ttl_micros = EXCLUDED.ttl_micros, listener = EXCLUDED.listener,"
                    + " seq = CASE WHEN w.wait_until <= clock_timestamp() THEN EXCLUDED.seq ELSE w.seq END"
                    + " RETURNING w.name, w.wait_until),"
                    // The lease row says that someone waits, so that a release learns it from its own row.
                    + " f AS (UPDATE " + table + " AS s SET waiters_until = GREATEST(s.waiters_until, e.wait_until)"
                    + " FROM e WHERE s.name = e.name)"
                    + " SELECT token, acquired_at, expires_at FROM a";
            acquireAll = "WITH n AS (SELECT clock_timestamp() AS t, " + FIRST_TOKEN + " AS e WHERE " + DURABLE + ")"
                    + " INSERT INTO " + table + " AS l (name, owner, token, acquired_at, expires_at)"
                    + " SELECT b.name, b.owner, GREATEST(1, n.e), n.t, n.t + b.ttl * interval '1 microsecond'"
                    + " FROM n, unnest(?::varchar[], ?::varchar[], ?::bigint[]) AS b(name, owner, ttl) ORDER BY b.name"
                    + update + " WHERE l.expires_at <= EXCLUDED.acquired_at"
                    + " RETURNING l.name, l.token, l.acquired_at, l.expires_at";
            handOff = handOff(table, queue, stem, "");
            lockRow = "SELECT 1 FROM " + table + " WHERE name = ? FOR UPDATE; ";
            // No lockRow: the release's own update holds the row lock when it matched, and else this does nothing.
            handOffIfReleased = handOff(table, queue, stem, " WHERE current_setting('" + RELEASED + "', true) = 'on'");
            giveUp = lockRow + leaveQueueSql() + "; "
                    + "UPDATE " + table + " SET expires_at = acquired_at, handed_to = NULL"
                    + " WHERE name = ? AND handed_to = ? AND expires_at > clock_timestamp(); ";
            renew = "UPDATE " + table + " SET expires_at = clock_timestamp() + ? * interval '1 microsecond'"
                    + " WHERE name = ? AND owner = ? AND token = ? AND expires_at > clock_timestamp()"
                    + " RETURNING expires_at, " + DURABLE;
        }

        /**
         * The stem of a lease table's LISTEN/NOTIFY channels, as an SQL expression: made from the table
         * as PostgreSQL resolves the name (its schema by the search path, unquoted parts folded to
         * lower case), so that every spelling of one table ({@code leases}, {@code LEASES},
         * {@code public.leases}) has the same channels, and services that spell it differently still
         * wake each other's waiters. {@code holdfast_lease_<schema>_<table>}, or with the MD5 of
         * {@code <schema>.<table>} where that is longer than 37 characters: a plain lower-case
         * identifier of at most 52 characters, so that a listener's channel ({@link #listenerChannel})
         * fits PostgreSQL's 63. A table that does not exist (yet) has the stem of its spelling, lower-cased.
         * The table is a validated identifier ({@code [A-Za-z0-9_.]}), safe in a literal.
         */
        static String stemSql(String table) {
            String spelled = "'" + table + "'";
            return "(SELECT 'holdfast_lease_' || CASE WHEN length(r.q) <= 37 THEN r.q ELSE md5(r.q) END FROM"
                    + " (SELECT coalesce((SELECT n.nspname || '_' || c.relname FROM pg_catalog.pg_class c"
                    + " JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass(" + spelled + ")),"
                    + " replace(lower(" + spelled + "), '.', '_')) AS q) r)";
        }

        /**
         * The channel one listener listens on: the table's stem and the listener's backend pid, the pid
         * a waiter publishes in its queue entry. A hand-off notifies only its waiter's listener, so the
         * other services' listeners (every instance has one) are not woken for a grant that is not
         * theirs. PostgreSQL still signals every listening backend of the database at each notifying
         * commit; those read the queue and send nothing to their clients.
         *
         * @param stem the stem as {@link #stemSql} evaluated it
         */
        static String listenerChannel(String stem, int pid) {
            return stem + "_" + pid;
        }

        /** {@link #listenerChannel} in SQL, of the stem and pid that SQL expressions give (null for no pid). */
        static String listenerChannelSql(String stemSql, String pid) {
            return stemSql + " || '_' || " + pid;
        }

        /**
         * {@link #LISTENER_LOCK}, then this table's stem ({@link #stemSql}) as the listener's
         * connection resolves it: what a listener runs before its {@code LISTEN}.
         */
        String listenerLockSql() {
            return LISTENER_LOCK + ", " + stem;
        }

        @Override
        boolean notifiesWaiters() {
            return true;
        }

        @Override
        String acquireSql(boolean reentrant) {
            return reentrant ? reenter : acquire;
        }

        @Override
        String acquireOrQueueSql() {
            return acquireOrQueue;
        }

        @Override
        String plusMicros(String column) {
            return Dialect.POSTGRESQL.plusMicros(column, "?");
        }

        /**
         * The hand-off, sent after a release or force-release that reported waiters (in the same
         * transaction on a manual-commit connection, else in one of its own): locks the lease row (as
         * every statement does before queue rows, so none can deadlock), then, if the lease is free,
         * grants it to the first live waiter (its lease owner and TTL, a token above every earlier
         * one, database time, {@code handed_to} = its waiter id), removes that waiter's entry and
         * notifies it with the grant on its listener's own channel ({@link #listenerChannel}; payload
         * {@code <length of name>:<name><waiter id> <token> <acquired µs> <expires µs>}, epoch
         * microseconds), so the waiter learns of a grant that is
         * already committed, with no statement of its own. That commit is durable, as every grant's,
         * and flushes a fast release before it. Only a waiter whose listener connection still listens
         * ({@link #listenerAlive}) is handed the lease: a crashed process is not, and
         * the first waiter is not handed the lease (nor heard: its listener's channel has nobody, or it has
         * none), keeping the queue's order; it takes the lease at its next attempt, at once when its
         * service's listener reconnects (which wakes that service's waiters), else at its safety poll. The
         * first entry is locked ({@code FOR UPDATE}) so that a waiter refreshing or leaving it at that
         * moment is seen as it ends. If the releasing process dies between the two transactions, the
         * free lease goes to the first waiter at its safety poll.
         */
        @Override
        String handOffSql() {
            return lockRow + handOff;
        }

        /**
         * A release or force-release ({@code update}, in its durable form: a fast release would turn
         * the hand-off's grant down to {@code on} from a stronger session setting) and the hand-off in
         * one round trip. The update marks the transaction when it matched ({@link #RELEASED}, a
         * column of its own after the row's), and the hand-off does nothing without that mark: a
         * refused release changes nothing. The update locked the lease row when it matched, so the
         * hand-off needs no statement of its own for that lock (rows still lock lease row first, then
         * queue rows). Binds the update's parameters, then name twice.
         */
        @Override
        String withHandOffSql(String update) {
            return update + ", set_config('" + RELEASED + "', 'on', true); " + handOffIfReleased;
        }

        /**
         * A release learns from its own row whether anyone waits: every refused queued attempt raises
         * the row's {@code waiters_until} in its statement, while it holds the row lock. A release's
         * {@code UPDATE} works on the newest version of the row (READ COMMITTED re-reads a row that
         * changed after its snapshot), so it sees that mark even when it waited for the row lock
         * behind the very attempt that queued, which a subquery (reading the statement's older
         * snapshot) would miss. Nobody waiting costs the release nothing more than this column.
         */
        @Override
        boolean releaseReportsWaiters() {
            return true;
        }

        /** {@code gate}: a condition on the transaction, without which the hand-off does nothing; "" for none. */
        private static String handOff(String table, String queue, String stem, String gate) {
            String micros = "(extract(epoch FROM %s) * 1000000)::bigint";
            return "WITH n AS (SELECT clock_timestamp() AS t" + gate + "),"
                    + " h AS (SELECT q.name, q.owner, q.lease_owner, q.ttl_micros, q.listener FROM " + queue + " q, n"
                    + " WHERE q.name = ? AND q.wait_until > n.t ORDER BY q.seq LIMIT 1 FOR UPDATE OF q),"
                    + " g AS (UPDATE " + table + " AS l SET owner = h.lease_owner, token = GREATEST(l.token + 1, " + FIRST_TOKEN + "),"
                    + " acquired_at = n.t, expires_at = n.t + h.ttl_micros * interval '1 microsecond',"
                    + " handed_to = h.owner, broken_by = NULL, broken_at = NULL,"
                    // Nobody left behind the waiter: the row stops saying that someone waits.
                    + " waiters_until = CASE WHEN EXISTS (SELECT 1 FROM " + queue + " o WHERE o.name = h.name"
                    + " AND o.owner <> h.owner AND o.wait_until > n.t) THEN l.waiters_until END FROM h, n"
                    + " WHERE l.name = h.name AND l.expires_at <= n.t AND h.lease_owner IS NOT NULL"
                    + " AND " + listenerAlive("h.listener")
                    + " RETURNING l.name, h.owner AS waiter, l.token, l.acquired_at, l.expires_at),"
                    + " d AS (DELETE FROM " + queue + " q USING g WHERE q.name = g.name AND q.owner = g.waiter),"
                    // No live waiter at all (they left or lapsed): the row stops saying that someone waits.
                    + " c AS (UPDATE " + table + " AS z SET waiters_until = NULL WHERE z.name = ?"
                    + " AND z.waiters_until IS NOT NULL AND NOT EXISTS (SELECT 1 FROM h) AND EXISTS (SELECT 1 FROM n))"
                    + " SELECT (SELECT pg_notify(" + listenerChannelSql(stem, "h.listener") + ", length(h.name) || ':' || h.name || h.owner"
                    + " || COALESCE((SELECT ' ' || g.token || ' ' || " + micros.formatted("g.acquired_at")
                    + " || ' ' || " + micros.formatted("g.expires_at") + " FROM g), ''))"
                    + " FROM h WHERE h.listener IS NOT NULL AND EXISTS (SELECT 1 FROM " + table + " f WHERE f.name = h.name"
                    + " AND f.expires_at <= clock_timestamp())) IS NULL,"
                    + " set_config('synchronous_commit', CASE WHEN EXISTS (SELECT 1 FROM g) THEN " + DURABLE_LEVEL
                    + " ELSE current_setting('synchronous_commit') END, true)";
        }

        /**
         * Leaves the queue for good (a waiter that gave up), giving back a grant that was handed to it
         * meanwhile, which then goes to the next waiter: locks the lease row first (as every
         * statement does), removes the entry, expires a live grant handed to this waiter, then
         * {@link #handOffSql hands off}.
         */
        @Override
        String giveUpSql() {
            return giveUp + handOff;
        }

        @Override
        List<String> giveUpBinds(String name, String waiter) {
            return List.of(name, name, waiter, name, waiter, name, name);
        }

        /**
         * Returns the released row's token and whether a waiter may be queued; with {@code fast},
         * commits without waiting for the WAL flush.
         */
        @Override
        String releaseSql(boolean withToken, boolean heldAtLeast, boolean fast) {
            return "UPDATE " + table + " AS l SET broken_by = NULL, broken_at = NULL, handed_to = NULL, expires_at = "
                    + releasedExpiry(heldAtLeast) + " WHERE l.name = ? AND l.owner = ?"
                    + (withToken ? " AND l.token = ?" : "") + " AND l.expires_at > clock_timestamp()"
                    + " RETURNING l.token, l.waiters_until > clock_timestamp()"
                    + (fast ? ", set_config('synchronous_commit', 'off', true)" : "");
        }

        @Override
        String forceReleaseSql() {
            return "UPDATE " + table + " AS l SET broken_by = ?, broken_at = clock_timestamp(), handed_to = NULL,"
                    + " expires_at = l.acquired_at WHERE l.name = ? AND l.expires_at > clock_timestamp()"
                    + " RETURNING l.token, l.waiters_until > clock_timestamp()";
        }

        @Override
        String renewSql() {
            return renew;
        }

        /** One text for any number of rows: the rows come as arrays. */
        @Override
        String acquireAllSql(int rows) {
            return acquireAll;
        }

        /**
         * Locks the batch's rows in name order first ({@code FOR UPDATE} above a sort), so that
         * whatever join the planner picks for the update, two batches cannot deadlock.
         */
        @Override
        String releaseAllSql(int rows, boolean fast) {
            return "WITH b AS (SELECT * FROM unnest(?::varchar[], ?::varchar[], ?::bigint[]) AS b(name, owner, token)),"
                    + " k AS (SELECT l.name FROM " + table + " l WHERE l.name IN (SELECT name FROM b) ORDER BY l.name FOR UPDATE)"
                    + " UPDATE " + table + " AS l SET broken_by = NULL, broken_at = NULL, handed_to = NULL,"
                    + " expires_at = l.acquired_at FROM b, k WHERE l.name = b.name AND k.name = b.name"
                    + " AND l.owner = b.owner AND l.token = b.token AND l.expires_at > clock_timestamp()"
                    + " RETURNING l.name, l.waiters_until > clock_timestamp()"
                    + (fast ? ", set_config('synchronous_commit', 'off', true)" : "");
        }

        @Override
        boolean bindsArrays() {
            return true;
        }

        /** Durable, as a grant: the tokens it reserves must never be handed out again after a crash. */
        @Override
        String reserveSql() {
            return super.reserveSql() + " RETURNING token, expires_at, clock_timestamp(), " + DURABLE;
        }
    }

    /**
     * MariaDB: {@code INSERT … ON DUPLICATE KEY UPDATE … RETURNING} always returns the row's final
     * state. Assignments apply left to right and later ones see earlier new values, so token,
     * acquired_at and owner test only the old {@code expires_at}, which is assigned last; its own
     * test ({@code owner = VALUES(owner)}) is then right under both old-value and new-value rules.
     * {@code UTC_TIMESTAMP(6)} is fixed for the statement.
     *
     * <p>Re-entrant form: the caller holds the lease iff the returned owner is the caller. The
     * exclusive form must also tell its own grant from the caller's live row: a grant (insert or
     * takeover) sets {@code acquired_at} to the statement's {@code UTC_TIMESTAMP(6)}, and a refusal
     * leaves it, so {@code RETURNING acquired_at = UTC_TIMESTAMP(6)} says which. Two statements can
     * start in the same microsecond, so a refusal that finds {@code acquired_at} equal to its own
     * now moves it 1 µs forward (no other effect: expiry, token and owner stay; the row is live, so
     * it still ends after it begins). Forward, not back: a release sets {@code expires_at} to that
     * {@code acquired_at}, and a later grant needs its now at or after it, so it can never start
     * before the {@code acquiredAt} the holder was told (1 µs back allowed exactly that). A session variable
     * set in the update cannot carry the decision: measured, {@code RETURNING} then reads it as it
     * was before the statement when it had no value yet.
     */
    static final class MariaDb extends LeaseSql {
        private final String acquire;
        private final String reenter;
        private final String acquireQueued;
        private final String joinQueue;
        private final String renew;
        /** The exclusive acquire's update and {@code RETURNING} keyword, shared with its batch form. */
        private final String acquireUpdate;
        private final ConcurrentHashMap<Integer, String> acquireAll = new ConcurrentHashMap<>();
        private final ConcurrentHashMap<Integer, String> releaseAll = new ConcurrentHashMap<>();

        MariaDb(String table) {
            super(table, Dialect.MARIADB);
            String queue = table + "_queue";
            String expired = "expires_at <= UTC_TIMESTAMP(6)";
            String insert = "INSERT INTO " + table + " (name, owner, token, acquired_at, expires_at)"
                    + " VALUES (?, ?, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)"
                    + " ON DUPLICATE KEY UPDATE";
            String head = insert + " token = IF(" + expired + ", token + 1, token),";
            String owner = " owner = IF(" + expired + ", VALUES(owner), owner),";
            // Column 5 says whether this statement granted: always true for the re-entrant form.
            acquireUpdate = " token = IF(" + expired + ", token + 1, token),"
                    + " acquired_at = IF(" + expired + ", VALUES(acquired_at),"
                    + " IF(acquired_at = VALUES(acquired_at), acquired_at + INTERVAL 1 MICROSECOND, acquired_at)),"
                    + owner
                    + " expires_at = IF(" + expired + ", VALUES(expires_at), expires_at)"
                    + " RETURNING ";
            acquire = insert + acquireUpdate
                    + "token, acquired_at, expires_at, owner, acquired_at = UTC_TIMESTAMP(6)";
            // The queued form grants only if, besides, no live waiter queued before this one. Each
            // assignment repeats the condition (the queue is another table, read once per statement's
            // snapshot; a session variable would outlive the statement on the pooled connection).
            // (VALUES() is not allowed in a subquery: the name is bound again.)
            String grant = "(" + expired + " AND NOT EXISTS (SELECT 1 FROM " + queue + " q WHERE q.name = ?"
                    + " AND q.owner <> ? AND q.wait_until > UTC_TIMESTAMP(6) AND q.queued_at < COALESCE((SELECT m.queued_at"
                    + " FROM " + queue + " m WHERE m.name = ? AND m.owner = ? AND m.wait_until > UTC_TIMESTAMP(6)),"
                    + " TIMESTAMP '9999-12-31 00:00:00')))";
            acquireQueued = "INSERT INTO " + table + " (name, owner, token, acquired_at, expires_at)"
                    + " VALUES (?, ?, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)"
                    + " ON DUPLICATE KEY UPDATE"
                    + " token = IF(" + grant + ", token + 1, token),"
                    + " acquired_at = IF(" + grant + ", VALUES(acquired_at),"
                    + " IF(acquired_at = VALUES(acquired_at), acquired_at + INTERVAL 1 MICROSECOND, acquired_at)),"
                    + " owner = IF(" + grant + ", VALUES(owner), owner),"
                    + " expires_at = IF(" + grant + ", VALUES(expires_at), expires_at)"
                    + " RETURNING token, acquired_at, expires_at, owner, acquired_at = UTC_TIMESTAMP(6)";
            // queued_at before wait_until: assignments see earlier new values.
            joinQueue = "INSERT INTO " + queue + " (name, owner, queued_at, wait_until)"
                    + " VALUES (?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)"
                    + " ON DUPLICATE KEY UPDATE queued_at = IF(wait_until <= UTC_TIMESTAMP(6), VALUES(queued_at), queued_at),"
                    + " wait_until = VALUES(wait_until)";
            reenter = head
                    + " acquired_at = IF(" + expired + ", VALUES(acquired_at), acquired_at),"
                    + owner
                    // A renewal never ends before its grant began: the statement's now may be from before
                    // a wait for the row. (acquired_at, assigned above, is a new grant's now: no change there.)
                    + " expires_at = IF(" + expired + " OR owner = VALUES(owner), GREATEST(VALUES(expires_at), acquired_at), expires_at)"
                    + " RETURNING token, acquired_at, expires_at, owner, TRUE";
            renew = "UPDATE " + table + " SET expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND"
                    + " WHERE name = ? AND owner = ? AND token = ? AND expires_at > UTC_TIMESTAMP(6)";
        }

        @Override
        String acquireSql(boolean reentrant) {
            return reentrant ? reenter : acquire;
        }

        /**
         * ODKU always returns the row's final state: granted iff its owner is the caller and, in the
         * exclusive form, the statement granted it (inserted, or updated an expired row).
         */
        @Override
        boolean acquireReturnsFinalRow() {
            return true;
        }

        @Override
        String acquireQueuedSql() {
            return acquireQueued;
        }

        /** Name, waiter, name, waiter in each of the four assignments. */
        @Override
        List<String> queuedBinds(String name, String waiter) {
            List<String> binds = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                binds.addAll(List.of(name, waiter, name, waiter));
            }
            return binds;
        }

        @Override
        String joinQueueSql() {
            return joinQueue;
        }

        @Override
        String plusMicros(String column) {
            return Dialect.MARIADB.plusMicros(column, "?");
        }

        @Override
        String renewSql() {
            return renew;
        }

        /** One row of values per lease: a text for each batch size. */
        @Override
        String acquireAllSql(int rows) {
            return acquireAll.computeIfAbsent(rows, n -> "INSERT INTO " + table + " (name, owner, token, acquired_at, expires_at) VALUES "
                    + String.join(", ", Collections.nCopies(n,
                            "(?, ?, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)"))
                    + " ON DUPLICATE KEY UPDATE" + acquireUpdate
                    + "name, token, acquired_at, expires_at, owner, acquired_at = UTC_TIMESTAMP(6)");
        }

        /**
         * No {@code UPDATE … RETURNING} on MariaDB, so the release of many rows is an insert of the
         * rows it selects (locked, in name order) that always meets the row itself: its
         * {@code ON DUPLICATE KEY UPDATE} releases it, and {@code RETURNING} names each row it released.
         * Nothing is ever inserted: only existing rows are selected. The rows are found by the
         * names alone ({@code name IN}, a primary-key range: MariaDB 10.11 also ranges a row-value
         * {@code IN}, older versions did not, and a locking scan would lock the whole table);
         * binds the names, then name, owner, token of each.
         */
        @Override
        String releaseAllSql(int rows, boolean fast) {
            return releaseAll.computeIfAbsent(rows, n -> "INSERT INTO " + table + " (name, owner, token, acquired_at, expires_at)"
                    + " SELECT s.name, s.owner, s.token, s.acquired_at, s.expires_at FROM " + table + " s"
                    + " WHERE s.name IN (" + String.join(", ", Collections.nCopies(n, "?"))
                    + ") AND (s.name, s.owner, s.token) IN (" + String.join(", ", Collections.nCopies(n, "(?, ?, ?)"))
                    + ") AND s.expires_at > UTC_TIMESTAMP(6) ORDER BY s.name FOR UPDATE"
                    + " ON DUPLICATE KEY UPDATE broken_by = NULL, broken_at = NULL, expires_at = VALUES(acquired_at)"
                    + " RETURNING name, FALSE");
        }

        /** No {@code UPDATE … RETURNING} on MariaDB: the update, then a read of the new expiry (renewals are rare). */
        @Override
        boolean renewReturnsExpiry() {
            return false;
        }
    }
}
