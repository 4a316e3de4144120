package dev.holdfast.lease.internal;

import dev.holdfast.jdbc.dialect.Dialect;
import org.jspecify.annotations.Nullable;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

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
final class MariaDbLeaseSql extends PollingLeaseSql implements BatchLeaseSql {
    private final String acquire;
    private final String reenter;
    private final String acquireQueued;
    private final String joinQueue;
    private final String requeue;
    /** From the live leases handed to a waiter whose entry names this connection, and the entries. */
    private final String handedHere;

    private final String waitsOn;
    private final ConcurrentHashMap<Integer, String> watch = new ConcurrentHashMap<>();
    private final String renew;
    /** The release that hands the lease to the first live waiter, without and with a token. */
    private final String releaseHandingOff;

    private final String releaseHandingOffWithToken;
    /** The cheaper hand-off, where it applies: the first waiter read without a lock, then handed the lease. */
    private final String firstWaiter;

    private final String firstWaiterWithToken;
    private final String nextWaiter;
    private final String handTo;
    private final String handToWithToken;
    /** The exclusive acquire's update and {@code RETURNING} keyword, shared with its batch form. */
    private final String acquireUpdate;

    private final ConcurrentHashMap<Integer, String> acquireAll = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Integer, String> releaseAll = new ConcurrentHashMap<>();

    public MariaDbLeaseSql(String table) {
        super(table, Dialect.MARIADB);
        String queue = table + "_queue";
        String expired = "expires_at <= UTC_TIMESTAMP(6)";
        String live = "expires_at > UTC_TIMESTAMP(6)";
        String insert = "INSERT INTO " + table + " (name, owner, token, acquired_at, expires_at)"
                + " VALUES (?, ?, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)"
                + " ON DUPLICATE KEY UPDATE";
        String head = insert + " token = IF(" + expired + ", token + 1, token),";
        String owner = " owner = IF(" + expired + ", VALUES(owner), owner),";
        // Column 5 says whether this statement granted: always true for the re-entrant form.
        acquireUpdate = " token = IF(" + expired + ", token + 1, token),"
                + " acquired_at = IF(" + expired + ", VALUES(acquired_at),"
                + " IF(acquired_at = VALUES(acquired_at), acquired_at + INTERVAL 1 MICROSECOND, acquired_at)),"
                + owner + handedTo(expired)
                + " expires_at = IF(" + expired + ", VALUES(expires_at), expires_at)"
                + " RETURNING ";
        acquire = insert + acquireUpdate + "token, acquired_at, expires_at, owner, acquired_at = UTC_TIMESTAMP(6)";
        // The queued form grants only if, besides, no live waiter queued before this one. Each
        // assignment repeats the condition (the queue is another table, read once per statement's
        // snapshot; a session variable would outlive the statement on the pooled connection).
        // The subqueries name the lease row's own column, so they run after the statement locked that row:
        // queue rows are locked after the lease row, as a release locks them, and neither can deadlock the
        // other (with the name bound instead, they ran first, and did).
        // Entries up to the row's served mark belong to calls granted already: they count for nothing.
        String grant = "(" + expired + " AND NOT EXISTS (SELECT 1 FROM " + queue + " q WHERE q.name = " + table
                + ".name"
                + " AND q.owner <> ? AND q.wait_until > UTC_TIMESTAMP(6) AND " + place("q") + " > COALESCE(" + table
                + ".served, '') AND q.queued_at < COALESCE((SELECT m.queued_at"
                + " FROM " + queue + " m WHERE m.name = " + table
                + ".name AND m.owner = ? AND m.wait_until > UTC_TIMESTAMP(6)),"
                + " TIMESTAMP '9999-12-31 00:00:00')))";
        acquireQueued = "INSERT INTO " + table + " (name, owner, token, acquired_at, expires_at)"
                + " VALUES (?, ?, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)"
                + " ON DUPLICATE KEY UPDATE"
                + " token = IF(" + grant + ", token + 1, token),"
                + " acquired_at = IF(" + grant + ", VALUES(acquired_at),"
                + " IF(acquired_at = VALUES(acquired_at), acquired_at + INTERVAL 1 MICROSECOND, acquired_at)),"
                // handed_to names this waiter: its entry, until it goes, is not handed the lease it holds.
                + " owner = IF(" + grant + ", VALUES(owner), owner), handed_to = IF(" + grant + ", ?, handed_to),"
                // The served mark moves up to this waiter's entry (never back): its entry counts for nothing now.
                // (Later assignments see the new mark; their condition stays true: nobody is before this waiter.)
                + " served = IF(" + grant + " AND (SELECT " + place("m") + " FROM " + queue + " m WHERE m.name = "
                + table + ".name AND m.owner = ?) > COALESCE(served, ''), (SELECT " + place("m") + " FROM " + queue
                + " m WHERE m.name = " + table + ".name AND m.owner = ?), served),"
                + " expires_at = IF(" + grant + ", VALUES(expires_at), expires_at),"
                // Refused: the row says that a waiter may be queued until after its entry lapses (bound: the entry's
                // life and a second for the join that follows), so that releases meanwhile hand the lease on.
                // (acquired_at is now this statement's time only if it granted: a refusal moved an equal one on.)
                + " waiters_until = IF(acquired_at = UTC_TIMESTAMP(6), waiters_until,"
                + " GREATEST(COALESCE(waiters_until, UTC_TIMESTAMP(6)), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND))"
                // Granted: by this statement, or earlier by a release that handed the lease to this waiter.
                + " RETURNING token, acquired_at, expires_at, owner, acquired_at = UTC_TIMESTAMP(6)"
                + " OR (handed_to <=> ? AND " + live + ")"
                // For a refused waiter: whether its entry is at or behind the served mark (servedPast). Correlated
                // on the row's name, as the subqueries above: bound, it was read before the row's lock, and deadlocked.
                + ", COALESCE((SELECT " + place("m") + " FROM " + queue + " m WHERE m.name = " + table + ".name"
                + " AND m.owner = ?) <= served, FALSE)";
        // The lease row first (STRAIGHT_JOIN: read, so share-locked, before the entry), the order every statement
        // keeps; the condition is checked again under that lock.
        requeue = "UPDATE " + table + " l STRAIGHT_JOIN " + queue + " q ON q.name = l.name AND q.owner = ?"
                + " SET q.queued_at = GREATEST(UTC_TIMESTAMP(6),"
                + " STR_TO_DATE(LEFT(l.served, 20), '%Y%m%d%H%i%s%f') + INTERVAL 1 MICROSECOND)"
                + " WHERE l.name = ? AND " + place("q") + " <= l.served";
        handedHere = " FROM " + queue + " q JOIN " + table + " l ON l.name = q.name AND l.handed_to = q.owner"
                + " WHERE q.listener = CONNECTION_ID() AND q.wait_until > UTC_TIMESTAMP(6) AND l.expires_at > UTC_TIMESTAMP(6)";
        // A plain read, no lock: while the mark lasts, a release hands the lease on (an expiry or a forced release
        // does not: the waiter's own look takes those).
        waitsOn = "SELECT 1 FROM " + table + " l JOIN " + queue + " q ON q.name = l.name AND q.owner = ?"
                + " WHERE l.name = ? AND l.expires_at > UTC_TIMESTAMP(6) AND l.owner <> ?"
                + " AND NOT (l.handed_to <=> q.owner) AND q.wait_until > UTC_TIMESTAMP(6)"
                + " AND l.waiters_until >= q.wait_until AND " + place("q") + " > COALESCE(l.served, '')";
        // queued_at before wait_until: assignments see earlier new values.
        joinQueue = "INSERT INTO " + queue + " (name, owner, queued_at, wait_until, lease_owner, ttl_micros, listener)"
                + " VALUES (?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, ?, ?, ?)"
                + " ON DUPLICATE KEY UPDATE queued_at = IF(wait_until <= UTC_TIMESTAMP(6), VALUES(queued_at), queued_at),"
                + " wait_until = VALUES(wait_until), lease_owner = VALUES(lease_owner), ttl_micros = VALUES(ttl_micros),"
                + " listener = VALUES(listener)";
        reenter = head
                + " acquired_at = IF(" + expired + ", VALUES(acquired_at), acquired_at),"
                + owner + handedTo(expired)
                // A renewal never ends before its grant began: the statement's now may be from before
                // a wait for the row. (acquired_at, assigned above, is a new grant's now: no change there.)
                + " expires_at = IF(" + expired
                + " OR owner = VALUES(owner), GREATEST(VALUES(expires_at), acquired_at), expires_at)"
                + " RETURNING token, acquired_at, expires_at, owner, TRUE";
        releaseHandingOff = releaseHandingOff(table, queue, "");
        releaseHandingOffWithToken = releaseHandingOff(table, queue, " AND s.token = ?");
        firstWaiter = firstWaiter(table, queue, " AND s.owner = ?");
        firstWaiterWithToken = firstWaiter(table, queue, " AND s.owner = ? AND s.token = ?");
        nextWaiter = firstWaiter(table, queue, " AND s.token = ?");
        handTo = handTo(table, queue, "");
        handToWithToken = handTo(table, queue, " AND token = ?");
        renew = "UPDATE " + table + " SET expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND"
                + " WHERE name = ? AND owner = ? AND token = ? AND expires_at > UTC_TIMESTAMP(6)";
    }

    /**
     * The place of queue entry {@code q} in arrival order as one string: its {@code queued_at} in 20 fixed-width
     * digits, then its waiter id; compared in binary, it orders as {@code ORDER BY queued_at, owner}. A stored
     * generated column ({@code <queue>.place}), indexed with the name: the first live entry past a served mark is
     * found by reading that index in order, with no sort and no string built per row.
     */
    private static String place(String q) {
        return q + ".place";
    }

    /**
     * A grant (when {@code granted}) without a queue entry clears {@code handed_to}: it names the waiting call
     * that holds the grant (granted by a hand-off, or by its own queued attempt), so that no later grant is
     * taken for a handed one, and the holder's own entry is not handed the lease at its release.
     */
    private static String handedTo(String granted) {
        return " handed_to = IF(" + granted + ", NULL, handed_to),";
    }

    /**
     * The release that hands the lease on: expires the caller's live grant or, if the first live waiter's
     * service is alive ({@link #LIVE_LOCK}), grants the lease to that waiter in the same statement (its
     * lease owner and TTL, token + 1, now, {@code handed_to} = its waiter id), so the hand-off costs one
     * commit and the waiter only reads. Entries up to the row's {@code served} mark are not handed the lease: they
     * belong to calls granted already (an entry goes only after its call returned), and the mark moves up
     * to each waiter's entry as it is granted; a first waiter whose service is gone, or that
     * published no wake-up connection, is not skipped: nobody is handed the lease, and the waiter
     * takes it at its next look, as before. The lease row is locked before the queue rows
     * ({@code LEFT JOIN}: the lease is the outer table), as the queued acquire locks them.
     * Binds name, owner[, token]; returns the row's token, whether it was handed on (it is live), whether a
     * waiter may still be queued ({@code waiters_until}) and, handed on, the waiter's wake-up connection.
     */
    private static String releaseHandingOff(String table, String queue, String token) {
        String handing = "(q.lease_owner IS NOT NULL AND q.ttl_micros IS NOT NULL" + " AND IS_USED_LOCK(CONCAT('"
                + LIVE_LOCK_PREFIX + "', q.listener)) = q.listener)";
        return "INSERT INTO " + table + " (name, owner, token, acquired_at, expires_at, handed_to, served)"
                + " SELECT s.name, IF(" + handing + ", q.lease_owner, s.owner), s.token, UTC_TIMESTAMP(6),"
                + " IF(" + handing + ", UTC_TIMESTAMP(6) + INTERVAL q.ttl_micros MICROSECOND, s.acquired_at),"
                + " IF(" + handing + ", q.owner, NULL), " + place("q")
                + " FROM " + table + " s LEFT JOIN " + queue + " q ON q.name = s.name"
                + " AND q.wait_until > UTC_TIMESTAMP(6) AND " + place("q") + " > COALESCE(s.served, '')"
                + " WHERE s.name = ? AND s.owner = ?" + token + " AND s.expires_at > UTC_TIMESTAMP(6)"
                + " ORDER BY q.place LIMIT 1 FOR UPDATE"
                // Left to right, later ones see earlier new values: expires_at last reads the new acquired_at.
                // (Columns qualified: the select's tables have them too.)
                + (" ON DUPLICATE KEY UPDATE token = IF(VALUES(handed_to) IS NULL, %1$s.token, %1$s.token + 1),"
                                + " acquired_at = IF(VALUES(handed_to) IS NULL, %1$s.acquired_at, VALUES(acquired_at)),"
                                + " owner = VALUES(owner), handed_to = COALESCE(VALUES(handed_to), %1$s.handed_to),"
                                + " served = IF(VALUES(handed_to) IS NULL, %1$s.served, VALUES(served)),"
                                + " broken_by = NULL, broken_at = NULL,"
                                + " expires_at = IF(VALUES(handed_to) IS NULL, %1$s.acquired_at, VALUES(expires_at))")
                        .formatted(table)
                + " RETURNING token, expires_at > UTC_TIMESTAMP(6), waiters_until > UTC_TIMESTAMP(6),"
                // Handed on: the wake-up connection the waiter's entry names, for the release to wake it.
                + (" IF(expires_at > UTC_TIMESTAMP(6), (SELECT m.listener FROM " + queue + " m WHERE m.name = %1$s.name"
                                + " AND m.owner = %1$s.handed_to), NULL)")
                        .formatted(table);
    }

    /**
     * The first live waiter past the served mark of a live lease, read without a lock: its waiter id, lease owner,
     * TTL, wake-up connection and place, and whether its service is alive ({@link #LIVE_LOCK}). Binds name, then
     * what {@code holder} names: the owner (and token) of a caller that releases, or the token of a grant just
     * handed to this service (so that its release knows whom to hand the lease to without this read).
     */
    private static String firstWaiter(String table, String queue, String holder) {
        return "SELECT q.owner, q.lease_owner, q.ttl_micros, q.listener, " + place("q") + ","
                + " IS_USED_LOCK(CONCAT('" + LIVE_LOCK_PREFIX + "', q.listener)) = q.listener"
                + " FROM " + table + " s JOIN " + queue + " q ON q.name = s.name AND q.wait_until > UTC_TIMESTAMP(6)"
                + " AND " + place("q") + " > COALESCE(s.served, '')"
                + " WHERE s.name = ?" + holder + " AND s.expires_at > UTC_TIMESTAMP(6)"
                + " ORDER BY q.place LIMIT 1";
    }

    /**
     * Hands a live lease the caller holds to a waiter {@link #firstWaiter} read, as {@link #releaseHandingOff}
     * would: one primary-key update that checks again, under the row's lock, that the caller holds the lease and
     * that this entry, as read (place, wake-up connection, lease owner, TTL), is still the first live one past the
     * served mark and its service alive. That look at the queue runs after the row is locked (it names the row's
     * column, as in the queued acquire) and share-locks what it reads, so it waits for a join that has not
     * committed yet (one that began before the read may come first, and is not left behind the mark), and a waiter
     * that leaves meanwhile either goes first (no row matches) or finds the grant when it gives back what was handed
     * to it. Binds lease owner, TTL, waiter, place, name, owner[, token], place, wake-up connection, lease owner, TTL.
     */
    private static String handTo(String table, String queue, String token) {
        return "UPDATE " + table + " SET token = token + 1, owner = ?, acquired_at = UTC_TIMESTAMP(6),"
                + " expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, handed_to = ?, served = ?,"
                + " broken_by = NULL, broken_at = NULL"
                + " WHERE name = ? AND owner = ?" + token + " AND expires_at > UTC_TIMESTAMP(6)"
                + " AND (?, ?, ?, ?) = (SELECT IF(IS_USED_LOCK(CONCAT('" + LIVE_LOCK_PREFIX
                + "', q.listener)) = q.listener, "
                + place("q") + ", NULL), q.listener, q.lease_owner, q.ttl_micros FROM " + queue + " q"
                + " WHERE q.name = " + table + ".name AND q.wait_until > UTC_TIMESTAMP(6)"
                + " AND " + place("q") + " > COALESCE(" + table + ".served, '')"
                + " ORDER BY q.place LIMIT 1 LOCK IN SHARE MODE)";
    }

    /** {@link #firstWaiter} of the caller's lease; binds name, owner[, token]. */
    String firstWaiterSql(boolean withToken) {
        return withToken ? firstWaiterWithToken : firstWaiter;
    }

    /** {@link #firstWaiter} after the grant with the token it binds (name, token). */
    String nextWaiterSql() {
        return nextWaiter;
    }

    /** {@link #handTo}; binds lease owner, TTL, waiter, place, name, owner[, token], place, wake-up connection, lease owner, TTL. */
    String handToSql(boolean withToken) {
        return withToken ? handToWithToken : handTo;
    }

    /**
     * Without a minimum hold, the plain release only while the row's {@code waiters_until} mark is past (no waiter
     * can be queued: every refused queued attempt raises it past its entry's life): what most releases need, one
     * primary-key update, where {@link #releaseHandingOffSql} (an insert that selects from its own table) costs
     * about twice as much. Matches no row while a waiter may be queued, and then the caller hands off. With a
     * minimum hold, as on every database (it hands nothing on).
     */
    @Override
    public String releaseSql(boolean withToken, boolean heldAtLeast, boolean relaxed) {
        return super.releaseSql(withToken, heldAtLeast, relaxed)
                + (heldAtLeast ? "" : " AND (waiters_until IS NULL OR waiters_until <= UTC_TIMESTAMP(6))");
    }

    /** {@link #releaseHandingOff}; binds name, owner[, token]. */
    String releaseHandingOffSql(boolean withToken) {
        return withToken ? releaseHandingOffWithToken : releaseHandingOff;
    }

    /**
     * What a waiter that gave up runs, in turn: leaves the queue, then gives back a live grant a release
     * handed to it meanwhile (the next waiter takes it at its next look). Each binds name, waiter.
     */
    List<String> giveUpSqls() {
        return List.of(
                leaveQueueSql(),
                "UPDATE " + table + " SET expires_at = acquired_at"
                        + " WHERE name = ? AND handed_to = ? AND expires_at > UTC_TIMESTAMP(6)");
    }

    /** The user-level lock a wake-up connection holds while it serves: its name ends in the connection id. */
    static final String LIVE_LOCK_PREFIX = "holdfast_live_";
    /** Takes {@link #LIVE_LOCK_PREFIX} + the connection id: 1 if taken, and the connection id. */
    static final String LIVE_LOCK =
            "SELECT GET_LOCK(CONCAT('" + LIVE_LOCK_PREFIX + "', CONNECTION_ID()), 0), CONNECTION_ID()";
    /** Gives back every user-level lock of the session: the live lock, a doorbell. */
    static final String RELEASE_LOCKS = "SELECT RELEASE_ALL_LOCKS()";

    @Override
    public void bindJoin(
            PreparedStatement ps,
            String name,
            String waiter,
            long queueMicros,
            String owner,
            long ttlMicros,
            @Nullable Integer listener)
            throws SQLException {
        super.bindJoin(ps, name, waiter, queueMicros, owner, ttlMicros, listener);
        ps.setString(4, owner);
        ps.setLong(5, ttlMicros);
        if (listener == null) {
            ps.setNull(6, Types.BIGINT);
        } else {
            ps.setLong(6, listener);
        }
    }

    @Override
    public String acquireSql(boolean reentrant) {
        return reentrant ? reenter : acquire;
    }

    /**
     * ODKU always returns the row's final state: granted iff its owner is the caller and, in the
     * exclusive form, the statement granted it (inserted, or updated an expired row).
     */
    @Override
    public boolean acquireReturnsFinalRow() {
        return true;
    }

    @Override
    public String acquireQueuedSql() {
        return acquireQueued;
    }

    /**
     * The waiter twice in each of the six assignments, and once more after the fourth's condition (its
     * {@code handed_to}) and twice more in the fifth (its entry's place); then how long past now a refusal marks
     * the row as waited for ({@code queueMicros} and a second); then the waiter a grant may have been handed to;
     * then the waiter, whose entry's place it returns.
     */
    @Override
    public List<Object> queuedBinds(String name, String waiter, long queueMicros) {
        List<Object> binds = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            binds.addAll(List.of(waiter, waiter));
            if (i == 3) {
                binds.add(waiter);
            } else if (i == 4) {
                binds.addAll(List.of(waiter, waiter));
            }
        }
        binds.add(queueMicros + 1_000_000);
        binds.addAll(List.of(waiter, waiter));
        return binds;
    }

    @Override
    public String joinQueueSql() {
        return joinQueue;
    }

    /**
     * After a refused queued attempt ({@link #acquireQueuedSql()}, its row current): whether the waiter's
     * entry is at or behind the served mark. Such an entry is no granted call's, but no release would
     * ever hand it the lease, and while releases hand the lease on, its look would never find it free
     * (its place came from a database clock that stepped back, or some path not foreseen):
     * {@link #requeueSql()} moves it behind the mark.
     */
    boolean servedPast(java.sql.ResultSet rs) throws SQLException {
        return rs.getBoolean(6);
    }

    /**
     * Moves a waiter's entry behind the served mark, at the database's time or just after the mark, if it is
     * still at or behind it; binds waiter, name.
     */
    String requeueSql() {
        return requeue;
    }

    @Override
    String lastInQueue() {
        return "TIMESTAMP '9999-12-31 00:00:00'";
    }

    @Override
    public String plusMicros(String column) {
        return Dialect.MARIADB.plusMicros(column, "?");
    }

    @Override
    public String renewSql() {
        return renew;
    }

    /** One row of values per lease: a text for each batch size. */
    @Override
    public String acquireAllSql(int rows) {
        return acquireAll.computeIfAbsent(
                rows,
                n -> "INSERT INTO " + table + " (name, owner, token, acquired_at, expires_at) VALUES "
                        + String.join(
                                ", ",
                                Collections.nCopies(
                                        n, "(?, ?, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)"))
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
     * binds the names, then name, owner, token of each. A row that a waiter may wait for
     * ({@code waiters_until}, as {@link #releaseSql}) is left alone: its release goes on its own, and hands it on.
     */
    @Override
    public String releaseAllSql(int rows, boolean relaxed) {
        return releaseAll.computeIfAbsent(
                rows,
                n -> "INSERT INTO " + table + " (name, owner, token, acquired_at, expires_at)"
                        + " SELECT s.name, s.owner, s.token, s.acquired_at, s.expires_at FROM " + table + " s"
                        + " WHERE s.name IN (" + String.join(", ", Collections.nCopies(n, "?"))
                        + ") AND (s.name, s.owner, s.token) IN ("
                        + String.join(", ", Collections.nCopies(n, "(?, ?, ?)"))
                        + ") AND s.expires_at > UTC_TIMESTAMP(6) AND (s.waiters_until IS NULL OR s.waiters_until <= UTC_TIMESTAMP(6))"
                        + " ORDER BY s.name FOR UPDATE"
                        + " ON DUPLICATE KEY UPDATE broken_by = NULL, broken_at = NULL, expires_at = VALUES(acquired_at)"
                        + " RETURNING name, FALSE");
    }

    /** The three values of each row in turn. */
    @Override
    public boolean bindsArrays() {
        return false;
    }

    /** No {@code UPDATE … RETURNING} on MariaDB: the update, then a read of the new expiry (renewals are rare). */
    @Override
    public boolean renewReturnsExpiry() {
        return false;
    }

    /*
     * Wake-ups (MariaDbWakeUps): a release that hands the lease on ends the sleep of the waiter's
     * wake-up connection; that connection watches for leases handed to its service's waiters.
     */

    /** Ends the statement of the connection whose id it binds (a release's wake-up). */
    static final String WAKE = "KILL QUERY ?";

    /**
     * The wake-up connection's sleep: 2 at once if a live lease is handed to a waiter whose live entry names
     * this connection, other than the {@code seen} grants, else a wait for its doorbell ({@link #BELL_HOLD}),
     * held by another connection of the service, for at most the seconds bound: 0 when they passed, NULL when a
     * release's kill ended the wait, 1 if the bell was free (its holder is gone). One statement, so a release's
     * kill is never lost: a hand-off committed before it began is found, and a kill during it ends the wait.
     * A user-level lock wait, not {@code SLEEP}: MariaDB can stall a {@code KILL QUERY} of a {@code SLEEP} for
     * seconds when kills overlap (every sleeper shares one mutex), and measured no such stall on lock waits.
     * Binds name, token of each seen grant, then the seconds.
     */
    String watchSql(int seen) {
        return watch.computeIfAbsent(
                seen,
                n -> "SELECT IF(EXISTS (SELECT 1" + handedHere
                        + (n == 0
                                ? ""
                                : " AND (l.name, l.token) NOT IN ("
                                        + String.join(", ", Collections.nCopies(n, "(?, ?)")) + ")")
                        + "), 2, GET_LOCK(CONCAT('" + BELL_PREFIX + "', CONNECTION_ID()), ?))");
    }

    /** The user-level lock a wake-up connection waits for, named after it: another connection of its service holds it. */
    static final String BELL_PREFIX = "holdfast_bell_";
    /** Takes the doorbell of the wake-up connection whose id it binds: 1 if taken. */
    static final String BELL_HOLD = "SELECT GET_LOCK(CONCAT('" + BELL_PREFIX + "', ?), 0)";

    /**
     * Whether a waiter whose entry is in the queue can only wait: the lease is live, held by another owner and not
     * handed to it, its entry is live and past the served mark, and the row's {@code waiters_until} mark lasts
     * as long as the entry, so every release until then hands the lease on. A row means it waits; then the
     * queued acquire ({@link #acquireQueuedSql}), which locks the lease row and costs several times as much,
     * would refuse it and change nothing. Binds waiter, name, owner.
     */
    String waitsOnSql() {
        return waitsOn;
    }

    /** The live grants handed to waiters whose live entries name this connection: name, waiter, token, acquired_at, expires_at. */
    String handedHereSql() {
        return "SELECT l.name, q.owner, l.token, l.acquired_at, l.expires_at" + handedHere;
    }

    @Override
    protected String queueOwnerAndTime() {
        return "CAST(NULL AS CHAR) AS lease_owner, queued_at";
    }
}
