package dev.holdfast.lease.internal;

import dev.holdfast.jdbc.dialect.Dialect;
import org.jspecify.annotations.Nullable;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.List;

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
 * {@code acquire} call (128 random bits, base64url), not the lease owner: concurrent calls of one
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
public final class PgLeaseSql extends LeaseSql implements BatchLeaseSql {
    /**
     * Grants and renewals are durable whatever the server, database, role or session says: this
     * condition, evaluated inside the statement, raises {@code synchronous_commit} to {@code on}
     * for the statement's own transaction if it was {@code off} or {@code local}, and keeps a
     * stronger setting ({@code remote_write}, {@code remote_apply}). Transaction-local: the
     * session's setting is back after the commit.
     */
    public static final String DURABLE_LEVEL = "CASE WHEN current_setting('synchronous_commit') IN ('off', 'local')"
            + " THEN 'on' ELSE current_setting('synchronous_commit') END";
    /**
     * A transaction-local setting that the combined release sets when it matched, so that the
     * hand-off sent in its round trip does nothing after a refused release.
     */
    public static final String RELEASED = "holdfast.released";

    public static final String DURABLE = "set_config('synchronous_commit', " + DURABLE_LEVEL + ", true) IS NOT NULL";

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
    public static final int LISTENER_LOCK_KEY = 0x486f6c64;
    /**
     * Taken by a listener connection before its {@code LISTEN}: whether it got the lock, and the
     * backend pid it took it for (the one to publish; a pooler between may report another at
     * connect). False while a transaction that checked this pid when it was a dead listener's
     * still runs (the listener tries again: such a transaction may be an application's, open for
     * long).
     */
    public static final String LISTENER_LOCK =
            "SELECT pg_try_advisory_lock(" + LISTENER_LOCK_KEY + ", pg_backend_pid())," + " pg_backend_pid()";
    /** Given back before the listener connection goes back to its pool. */
    public static final String LISTENER_UNLOCK =
            "SELECT pg_advisory_unlock(" + LISTENER_LOCK_KEY + ", pg_backend_pid())";
    /**
     * True while the listener with backend pid {@code pid} (an SQL expression) listens, null for no listener. Its
     * cost: if that listener is gone, the shared lock this takes stays to the end of the
     * transaction (a transaction-level lock, so that no error can leave it on a pooled connection),
     * and a listener that takes the pid over meanwhile starts listening only after that. (A session
     * never conflicts with itself: the check must not run on the listener's own connection, and
     * never does.)
     */
    public static String listenerAlive(String pid) {
        return "NOT pg_try_advisory_xact_lock_shared(" + LISTENER_LOCK_KEY + ", " + pid + ")";
    }

    /** The timeline WAL is inserted on now, as an {@code int}; see {@link #FIRST_TOKEN}. */
    public static final String TIMELINE = "('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int";

    /** Bits below the timeline in a token: 2^40 grants per name per timeline. */
    public static final int TIMELINE_SHIFT = 40;

    /**
     * The smallest token this server may grant: {@code (timeline - 1) << 40}, read in the
     * acquire statement itself. The timeline is the one WAL is inserted on now, the first 8 hex
     * digits of {@code pg_walfile_name(pg_current_wal_lsn())} (both callable by any role, and
     * an error during recovery, where no grant can be written anyway); a promotion raises it
     * before the new primary accepts its first write. {@code pg_control_checkpoint()} would
     * not do: it reports the old timeline until the end-of-recovery checkpoint (measured,
     * PostgreSQL 15).
     */
    public static final String FIRST_TOKEN = firstToken(PgLeaseSql.TIMELINE);

    private static String firstToken(String timeline) {
        return "((" + timeline + "::bigint - 1) << " + TIMELINE_SHIFT + ")";
    }

    private final String queue;
    /** {@link #stemSql} of this table. */
    private final String stem;

    private final String acquire;
    private final String reenter;
    private final String acquireOrQueue;
    /** Whether {@link #acquireOrQueue} locks the lease row in a CTE of its own first (with a grace); binds name first then. */
    private final boolean locksRowFirst;

    private final String acquireAll;
    private final String handOff;
    /** {@link #handOffSql} that does nothing unless this transaction released the lease ({@link #RELEASED}). */
    private final String handOffIfReleased;
    /** Locks the lease row first, as every statement does before queue rows: nothing deadlocks. Binds name. */
    private final String lockRow;

    private final String giveUp;
    private final String renew;

    public PgLeaseSql(String table) {
        this(table, 0, TIMELINE);
    }

    /**
     * @param graceMicros the grace after a promotion ({@link PgFailoverGrace}), 0 for none
     * @param timeline    the SQL expression of the server's timeline: {@link #TIMELINE}, or a number in tests
     */
    PgLeaseSql(String table, long graceMicros, String timeline) {
        super(table, Dialect.POSTGRESQL);
        PgFailoverGrace grace = new PgFailoverGrace(table, timeline, graceMicros);
        String firstToken = firstToken(timeline);
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
        String now =
                "(SELECT clock_timestamp() AS t, " + firstToken + " AS e WHERE " + DURABLE + grace.andOver() + ") n";
        acquire =
                grace.recordWith() + insert + now + update + " WHERE l.expires_at <= EXCLUDED.acquired_at" + returning;
        reenter = grace.recordWith() + insert + now + update
                + " WHERE l.expires_at <= EXCLUDED.acquired_at OR l.owner = EXCLUDED.owner" + returning;
        // A waiter's attempt also picks up a grant a release handed to it (handed_to), should it
        // have missed the notification: that grant is live and its own, and is extended.
        // In a grace after a promotion the waiter queues but is not granted (n has its row).
        // In a grace, a's insert has no row and so takes no lease row lock: k takes it, before e and f lock
        // the queue row and then the lease row, which would deadlock with a release's hand-off (seen in CI).
        String lockRowSelect = "SELECT 1 FROM " + table + " WHERE name = ? FOR UPDATE";
        locksRowFirst = graceMicros > 0;
        String rowLock = locksRowFirst ? "k AS (" + lockRowSelect + "), " : "";
        String afterRowLock = locksRowFirst ? " FROM (SELECT count(*) FROM k) x" : "";
        acquireOrQueue = "WITH " + grace.recordCte() + rowLock + "n AS (SELECT clock_timestamp() AS t, " + firstToken
                + " AS e" + afterRowLock + " WHERE " + DURABLE + "),"
                + " a AS (" + insert + "n" + grace.whereOver() + update
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
        acquireAll = "WITH " + grace.recordCte() + "n AS (SELECT clock_timestamp() AS t, " + firstToken + " AS e WHERE "
                + DURABLE + grace.andOver() + ")"
                + " INSERT INTO " + table + " AS l (name, owner, token, acquired_at, expires_at)"
                + " SELECT b.name, b.owner, GREATEST(1, n.e), n.t, n.t + b.ttl * interval '1 microsecond'"
                + " FROM n, unnest(?::varchar[], ?::varchar[], ?::bigint[]) AS b(name, owner, ttl) ORDER BY b.name"
                + update + " WHERE l.expires_at <= EXCLUDED.acquired_at"
                + " RETURNING l.name, l.token, l.acquired_at, l.expires_at";
        handOff = handOff(table, queue, stem, "", firstToken, grace);
        lockRow = lockRowSelect + "; ";
        // No lockRow: the release's own update holds the row lock when it matched, and else this does nothing.
        handOffIfReleased = handOff(
                table, queue, stem, " WHERE current_setting('" + RELEASED + "', true) = 'on'", firstToken, grace);
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
    public static String stemSql(String table) {
        String spelled = "'" + table + "'";
        return "(SELECT 'holdfast_lease_' || CASE WHEN length(r.q) <= 37 THEN r.q ELSE md5(r.q) END FROM"
                + " (SELECT coalesce((SELECT n.nspname || '_' || c.relname FROM pg_catalog.pg_class c"
                + " JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass(" + spelled
                + ")),"
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
    public static String listenerChannel(String stem, int pid) {
        return stem + "_" + pid;
    }

    /** {@link #listenerChannel} in SQL, of the stem and pid that SQL expressions give (null for no pid). */
    public static String listenerChannelSql(String stemSql, String pid) {
        return stemSql + " || '_' || " + pid;
    }

    /**
     * {@link #LISTENER_LOCK}, then this table's stem ({@link #stemSql}) as the listener's
     * connection resolves it: what a listener runs before its {@code LISTEN}.
     */
    public String listenerLockSql() {
        return LISTENER_LOCK + ", " + stem;
    }

    @Override
    public String acquireSql(boolean reentrant) {
        return reentrant ? reenter : acquire;
    }

    public String acquireOrQueueSql() {
        return acquireOrQueue;
    }

    /**
     * Binds {@link #acquireOrQueueSql()}, in the order its parts use them: with a grace, the lease row's
     * lock (name); the acquire (name, owner,
     * ttl); the queue checks (waiter as not the earlier entry, as its own entry, as the one handed the
     * lease); leaving the queue on a grant (name, waiter); joining it on a refusal (name, waiter, entry
     * lifetime, the lease's owner and ttl, the listener's backend pid or null).
     */
    public void bindAcquireOrQueue(
            PreparedStatement ps,
            String name,
            String owner,
            long ttlMicros,
            String waiter,
            long queueMicros,
            @Nullable Integer listener)
            throws SQLException {
        int i = 0;
        if (locksRowFirst) {
            ps.setString(++i, name);
        }
        ps.setString(++i, name);
        ps.setString(++i, owner);
        ps.setLong(++i, ttlMicros);
        ps.setString(++i, waiter);
        ps.setString(++i, waiter);
        ps.setString(++i, waiter);
        ps.setString(++i, name);
        ps.setString(++i, waiter);
        ps.setString(++i, name);
        ps.setString(++i, waiter);
        ps.setLong(++i, queueMicros);
        ps.setString(++i, owner);
        ps.setLong(++i, ttlMicros);
        if (listener == null) {
            ps.setNull(++i, Types.INTEGER);
        } else {
            ps.setInt(++i, listener);
        }
    }

    /** Waiters are granted in the order of their {@code seq}. */
    @Override
    String queueOrder() {
        return "seq";
    }

    @Override
    String lastInQueue() {
        return "9223372036854775807";
    }

    /** A grant handed to the caller as it gave up is no holder: its give-up hands it back. */
    @Override
    String notHandedTo() {
        return " AND l.handed_to IS DISTINCT FROM ?";
    }

    @Override
    public List<String> timeoutBinds(String name, String waiter) {
        return List.of(name, waiter, name, waiter, name, waiter);
    }

    @Override
    public String plusMicros(String column) {
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
     * and flushes a relaxed release before it. Only a waiter whose listener connection still listens
     * ({@link #listenerAlive}) is handed the lease: a crashed process is not, and
     * the first waiter is not handed the lease (nor heard: its listener's channel has nobody, or it has
     * none), keeping the queue's order; it takes the lease at its next attempt, at once when its
     * service's listener reconnects (which wakes that service's waiters), else at its safety poll. The
     * first entry is locked ({@code FOR UPDATE}) so that a waiter refreshing or leaving it at that
     * moment is seen as it ends. If the releasing process dies between the two transactions, the
     * free lease goes to the first waiter at its safety poll.
     */
    public String handOffSql() {
        return lockRow + handOff;
    }

    /**
     * A release or force-release ({@code update}, in its durable form: a relaxed release would turn
     * the hand-off's grant down to {@code on} from a stronger session setting) and the hand-off in
     * one round trip. The update marks the transaction when it matched ({@link #RELEASED}, a
     * column of its own after the row's), and the hand-off does nothing without that mark: a
     * refused release changes nothing. The update locked the lease row when it matched, so the
     * hand-off needs no statement of its own for that lock (rows still lock lease row first, then
     * queue rows). Binds the update's parameters, then name twice.
     */
    public String withHandOffSql(String update) {
        return update + ", set_config('" + RELEASED + "', 'on', true); " + handOffIfReleased;
    }

    /** {@code gate}: a condition on the transaction, without which the hand-off does nothing; "" for none. */
    private static String handOff(
            String table, String queue, String stem, String gate, String firstToken, PgFailoverGrace grace) {
        String micros = "(extract(epoch FROM %s) * 1000000)::bigint";
        return "WITH " + grace.recordCte() + "n AS (SELECT clock_timestamp() AS t" + gate + "),"
                + " h AS (SELECT q.name, q.owner, q.lease_owner, q.ttl_micros, q.listener FROM " + queue + " q, n"
                + " WHERE q.name = ? AND q.wait_until > n.t ORDER BY q.seq LIMIT 1 FOR UPDATE OF q),"
                // The grant's time is taken after h has locked its waiter's queue row, which may wait for
                // that waiter's own statement: a time from before that wait would stamp the grant earlier
                // than it was made (before a grace that was over only when it was made) and shorten it.
                + " k AS (SELECT clock_timestamp() AS t FROM h),"
                + " g AS (UPDATE " + table + " AS l SET owner = h.lease_owner, token = GREATEST(l.token + 1, "
                + firstToken + "),"
                + " acquired_at = k.t, expires_at = k.t + h.ttl_micros * interval '1 microsecond',"
                + " handed_to = h.owner, broken_by = NULL, broken_at = NULL,"
                // Nobody left behind the waiter: the row stops saying that someone waits.
                + " waiters_until = CASE WHEN EXISTS (SELECT 1 FROM " + queue + " o WHERE o.name = h.name"
                + " AND o.owner <> h.owner AND o.wait_until > n.t) THEN l.waiters_until END FROM h, n, k"
                + " WHERE l.name = h.name AND l.expires_at <= n.t AND h.lease_owner IS NOT NULL"
                + grace.andOverAt("k.t")
                + " AND " + listenerAlive("h.listener")
                + " RETURNING l.name, h.owner AS waiter, l.token, l.acquired_at, l.expires_at),"
                + " d AS (DELETE FROM " + queue + " q USING g WHERE q.name = g.name AND q.owner = g.waiter),"
                // No live waiter at all (they left or lapsed): the row stops saying that someone waits.
                + " c AS (UPDATE " + table + " AS z SET waiters_until = NULL WHERE z.name = ?"
                + " AND z.waiters_until IS NOT NULL AND NOT EXISTS (SELECT 1 FROM h) AND EXISTS (SELECT 1 FROM n))"
                + " SELECT (SELECT pg_notify(" + listenerChannelSql(stem, "h.listener")
                + ", length(h.name) || ':' || h.name || h.owner"
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
    public String giveUpSql() {
        return giveUp + handOff;
    }

    public List<String> giveUpBinds(String name, String waiter) {
        return List.of(name, name, waiter, name, waiter, name, name);
    }

    /**
     * Returns the released row's token and whether a waiter may be queued; with {@code relaxed},
     * commits without waiting for the WAL flush.
     *
     * <p>A release learns from its own row whether anyone waits: every refused queued attempt raises
     * the row's {@code waiters_until} in its statement, while it holds the row lock. A release's
     * {@code UPDATE} works on the newest version of the row (READ COMMITTED re-reads a row that
     * changed after its snapshot), so it sees that mark even when it waited for the row lock
     * behind the very attempt that queued, which a subquery (reading the statement's older
     * snapshot) would miss. Nobody waiting costs the release nothing more than this column.
     */
    @Override
    public String releaseSql(boolean withToken, boolean heldAtLeast, boolean relaxed) {
        return "UPDATE " + table + " AS l SET broken_by = NULL, broken_at = NULL, handed_to = NULL, expires_at = "
                + releasedExpiry(heldAtLeast) + " WHERE l.name = ? AND l.owner = ?"
                + (withToken ? " AND l.token = ?" : "") + " AND l.expires_at > clock_timestamp()"
                + " RETURNING l.token, l.waiters_until > clock_timestamp()"
                + (relaxed ? ", set_config('synchronous_commit', 'off', true)" : "");
    }

    @Override
    public String forceReleaseSql() {
        return "UPDATE " + table + " AS l SET broken_by = ?, broken_at = clock_timestamp(), handed_to = NULL,"
                + " expires_at = l.acquired_at WHERE l.name = ? AND l.expires_at > clock_timestamp()"
                + " RETURNING l.token, l.waiters_until > clock_timestamp()";
    }

    @Override
    public String renewSql() {
        return renew;
    }

    /** One text for any number of rows: the rows come as arrays. */
    @Override
    public String acquireAllSql(int rows) {
        return acquireAll;
    }

    /**
     * Locks the batch's rows in name order first ({@code FOR UPDATE} above a sort), so that
     * whatever join the planner picks for the update, two batches cannot deadlock.
     */
    @Override
    public String releaseAllSql(int rows, boolean relaxed) {
        return "WITH b AS (SELECT * FROM unnest(?::varchar[], ?::varchar[], ?::bigint[]) AS b(name, owner, token)),"
                + " k AS (SELECT l.name FROM " + table
                + " l WHERE l.name IN (SELECT name FROM b) ORDER BY l.name FOR UPDATE)"
                + " UPDATE " + table + " AS l SET broken_by = NULL, broken_at = NULL, handed_to = NULL,"
                + " expires_at = l.acquired_at FROM b, k WHERE l.name = b.name AND k.name = b.name"
                + " AND l.owner = b.owner AND l.token = b.token AND l.expires_at > clock_timestamp()"
                + " RETURNING l.name, l.waiters_until > clock_timestamp()"
                + (relaxed ? ", set_config('synchronous_commit', 'off', true)" : "");
    }

    @Override
    public boolean bindsArrays() {
        return true;
    }

    /** Durable, as a grant: the tokens it reserves must never be handed out again after a crash. */
    @Override
    public String reserveSql() {
        return super.reserveSql() + " RETURNING token, expires_at, clock_timestamp(), " + DURABLE;
    }

    /** The queue keeps a sequence, not a time, and the owner the grant will be made to. */
    @Override
    protected String arrivalOrder() {
        return "seq";
    }

    @Override
    protected String queueOwnerAndTime() {
        return "lease_owner, CAST(NULL AS timestamptz) AS queued_at";
    }
}
