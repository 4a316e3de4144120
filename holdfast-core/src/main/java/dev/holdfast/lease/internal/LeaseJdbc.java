package dev.holdfast.lease.internal;

import dev.holdfast.internal.Invariants;
import dev.holdfast.jdbc.dialect.Dialect;
import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Runs the statements of a {@link LeaseSql} on a connection it is given: binds them in the order
 * the statements document, and reads their results. One statement (one round trip) per operation,
 * or per batch of them, but a MariaDB renewal (an update, then a read).
 */
public final class LeaseJdbc {

    private final LeaseSql sql;
    private final Dialect dialect;
    /** The release's eight forms, built once: indexed by {@link #releaseForm}. */
    private final String[] releases = new String[8];
    /** Names whose last release by this service found waiters: their next one hands off in its round trip. */
    private final ContendedNames contended = new ContendedNames();
    /** MariaDB: wakes the service of the waiter a release handed the lease to; what that service read as next. */
    private final HandOffWakes wakes = new HandOffWakes();
    /** An update followed by the hand-off, by update. */
    private final Map<String, String> updatesWithHandOff = new ConcurrentHashMap<>();

    public LeaseJdbc(LeaseSql sql) {
        this.sql = sql;
        this.dialect = sql.dialect;
        for (int form = 0; form < releases.length; form++) {
            releases[form] = sql.releaseSql((form & 4) != 0, (form & 2) != 0, (form & 1) != 0);
        }
    }

    /** MariaDB: the wake-ups of this service's releases, and the next waiters its wake-up connection read. */
    HandOffWakes handOffWakes() {
        return wakes;
    }

    private static int releaseForm(boolean withToken, boolean heldAtLeast, boolean fast) {
        return (withToken ? 4 : 0) | (heldAtLeast ? 2 : 0) | (fast ? 1 : 0);
    }

    /** The grant, or empty if the lease is live (see {@link LeaseSql#acquireSql}). */
    public Optional<LeaseRow> acquire(Connection c, String name, String owner, long ttlMicros, boolean reentrant)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.acquireSql(reentrant))) {
            ps.setString(1, name);
            ps.setString(2, owner);
            ps.setLong(3, ttlMicros);
            try (ResultSet rs = ps.executeQuery()) {
                return granted(rs, name, owner);
            }
        }
    }

    /**
     * The blocking acquire's attempt, which respects and keeps the waiter queue: in one statement where
     * the database has one ({@link PgLeaseSql#acquireOrQueueSql}), else in statements of their own ({@link PollingLeaseSql}).
     *
     * @param joined   whether this waiter joined the queue in an earlier attempt (else a grant has no entry to remove)
     * @param listener the backend pid of the connection that will deliver this waiter's notification
     *                 (PostgreSQL), or the id of its service's live wake-up connection (MariaDB); null
     *                 if none: then no release hands the lease to it
     */
    public Optional<LeaseRow> acquireOrQueue(Connection c, String name, String owner, String waiter, long ttlMicros,
                                   long queueMicros, boolean joined, @Nullable Integer listener) throws SQLException {
        return acquireOrQueue(c, name, owner, waiter, ttlMicros, queueMicros, joined, true, true, listener);
    }

    /** The attempt above: with a queue of statements of its own, a waiter that {@code joined} refreshes only if {@code refresh}, leaves only if {@code leave}. */
    public Optional<LeaseRow> acquireOrQueue(Connection c, String name, String owner, String waiter, long ttlMicros,
                                   long queueMicros, boolean joined, boolean refresh, boolean leave,
                                   @Nullable Integer listener) throws SQLException {
        if (sql instanceof PollingLeaseSql polling) {
            // MariaDB: a waiter already queued, or one that queues for a name whose last release here had waiters, reads first.
            boolean readFirst = sql instanceof MariaDbLeaseSql && (joined || contended.contains(name)) && c.getAutoCommit();
            return readFirst && MariaDbHandOff.waitsOn(c, (MariaDbLeaseSql) sql, name, owner, waiter, ttlMicros, queueMicros,
                    !joined || refresh, listener) ? Optional.empty() : acquireThenQueue(polling, c, name, owner, waiter,
                    ttlMicros, queueMicros, (joined || readFirst) && leave, !readFirst && (!joined || refresh), listener);
        }
        PgLeaseSql pg = notifying();
        try (PreparedStatement ps = c.prepareStatement(pg.acquireOrQueueSql())) {
            pg.bindAcquireOrQueue(ps, name, owner, ttlMicros, waiter, queueMicros, listener);
            try (ResultSet rs = ps.executeQuery()) {
                return granted(rs, name, owner);
            }
        }
    }

    /**
     * The queue in statements of their own (waiters poll): the acquire that respects the queue, then
     * leaving the queue on a grant (if {@code leave}) or joining it (refreshing its entry) on a
     * refusal (if {@code join}). On a manual-commit pool they commit together; in auto-commit mode a
     * failure between them leaves at most an entry that lapses within {@code queueMicros}.
     */
    private Optional<LeaseRow> acquireThenQueue(PollingLeaseSql polling, Connection c, String name, String owner, String waiter, long ttlMicros,
                                             long queueMicros, boolean leave, boolean join, @Nullable Integer listener)
            throws SQLException {
        Optional<LeaseRow> granted;
        boolean servedPast;
        try (PreparedStatement ps = c.prepareStatement(polling.acquireQueuedSql())) {
            ps.setString(1, name);
            ps.setString(2, owner);
            ps.setLong(3, ttlMicros);
            int i = 4;
            for (Object value : polling.queuedBinds(name, waiter, queueMicros)) {
                ps.setObject(i++, value);
            }
            try (ResultSet rs = ps.executeQuery()) {
                granted = granted(rs, name, owner);
                servedPast = granted.isEmpty() && sql instanceof MariaDbLeaseSql m && m.servedPast(rs);
            }
        }
        if (servedPast) { // refused, and no release will hand it the lease: joins again behind the mark
            MariaDbHandOff.requeue(c, (MariaDbLeaseSql) sql, name, waiter);
        }
        if (granted.isPresent()) {
            if (leave) {
                leaveQueue(c, sql, name, waiter);
            }
        } else if (join) {
            polling.join(c, name, waiter, queueMicros, owner, ttlMicros, listener);
        }
        return granted;
    }

    /** Removes a waiter that was granted (also on a MariaDB service's wake-up connection: {@link GrantedEntries}). */
    static void leaveQueue(Connection c, LeaseSql sql, String name, String waiter) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.leaveQueueSql())) {
            ps.setString(1, name);
            ps.setString(2, waiter);
            ps.executeUpdate();
        }
    }

    /**
     * Removes a waiter that gave up; where releases hand the lease to waiters, also gives back a
     * grant handed to it meanwhile (which then goes to the next waiter), unless its call was {@code granted}.
     */
    public void giveUp(Connection c, String name, String waiter, boolean granted) throws SQLException {
        if (sql instanceof MariaDbLeaseSql mariaDb && !granted) {
            MariaDbHandOff.giveUp(c, mariaDb, name, waiter);
            return;
        }
        PgLeaseSql pg = sql instanceof PgLeaseSql p && !granted ? p : null;
        try (PreparedStatement ps = c.prepareStatement(pg != null ? pg.giveUpSql() : sql.leaveQueueSql())) {
            int i = 1;
            for (String value : pg != null ? pg.giveUpBinds(name, waiter) : List.of(name, waiter)) {
                ps.setString(i++, value);
            }
            ps.execute();
            drain(ps);
        }
    }

    private static void drain(PreparedStatement ps) throws SQLException {
        while (ps.getMoreResults() || ps.getUpdateCount() != -1) {
            // the remaining statements' results
        }
    }

    /**
     * Expires the caller's live grant; true if it was held.
     *
     * @param token null to match any grant of {@code owner}
     * @param fast  PostgreSQL only: commit without waiting for the WAL flush (caller checked it is safe)
     */
    public boolean release(Connection c, String name, String owner, @Nullable Long token, boolean fast,
                    @Nullable Long heldAtLeastMicros) throws SQLException {
        boolean withHandOff = contended.contains(name);
        String release = releases[releaseForm(token != null, heldAtLeastMicros != null, fast && !withHandOff)];
        Binder bind = ps -> {
            int i = 1;
            if (heldAtLeastMicros != null) {
                ps.setLong(i++, heldAtLeastMicros);
                ps.setLong(i++, heldAtLeastMicros);
            }
            ps.setString(i++, name);
            ps.setString(i++, owner);
            if (token != null) {
                ps.setLong(i++, token);
            }
            return i;
        };
        if (sql instanceof MariaDbLeaseSql mariaDb && heldAtLeastMicros == null) {
            // The plain release matches only while nobody may wait (MariaDbLeaseSql#releaseSql); else the hand-off.
            if (!withHandOff && updateThenHandOff(c, release, name, false, bind)) {
                return true;
            }
            MariaDbHandOff.Released released = MariaDbHandOff.release(c, mariaDb, name, owner, token, wakes);
            if (released.held()) {
                contended.found(name, released.queued());
            }
            return released.held();
        }
        return updateThenHandOff(c, release, name, withHandOff, bind);
    }

    /** Expires a live lease whoever holds it, recording {@code by} (null: an unnamed operator); true if there was one. */
    public boolean forceRelease(Connection c, String name, @Nullable String by) throws SQLException {
        return updateThenHandOff(c, sql.forceReleaseSql(), name, contended.contains(name), ps -> {
            ps.setString(1, by == null ? "" : by);
            ps.setString(2, name);
            return 3;
        });
    }

    /**
     * Runs an update that matches at most one row; where it reports that someone may wait
     * (PostgreSQL), then the hand-off: in the same transaction on a manual-commit connection, else in
     * one of its own. With {@code withHandOff} (the last release of this name in this service found
     * waiters), the update and the hand-off go in one round trip instead ({@link PgLeaseSql#withHandOffSql}:
     * the hand-off grants nothing if the update did not match or nobody waits after all). True if the
     * update matched.
     */
    private boolean updateThenHandOff(Connection c, String update, String name, boolean withHandOff, Binder bind)
            throws SQLException {
        if (!(sql instanceof PgLeaseSql)) { // only PostgreSQL's releases report waiters and hand off
            try (PreparedStatement ps = c.prepareStatement(update)) {
                bind.bind(ps);
                return ps.executeUpdate() == 1;
            }
        }
        if (withHandOff) {
            return updateWithHandOff(c, update, name, bind);
        }
        boolean waiters;
        try (PreparedStatement ps = c.prepareStatement(update)) {
            bind.bind(ps);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return false;
                }
                waiters = rs.getBoolean(2);
            }
        }
        if (waiters) {
            contended.found(name, true);
            handOff(c, name);
        }
        return true;
    }

    /** The update and the hand-off in one round trip; the update's own answer keeps or drops the hint. */
    private boolean updateWithHandOff(Connection c, String update, String name, Binder bind) throws SQLException {
        String both = updatesWithHandOff.computeIfAbsent(update, notifying()::withHandOffSql);
        try (PreparedStatement ps = c.prepareStatement(both)) {
            int i = bind.bind(ps);
            ps.setString(i++, name);
            ps.setString(i, name);
            ps.execute();
            boolean matched;
            boolean waiters;
            try (ResultSet rs = ps.getResultSet()) {
                matched = rs.next();
                waiters = matched && rs.getBoolean(2);
            }
            drain(ps);
            if (matched) { // a refused update tells nothing about waiters
                contended.found(name, waiters);
            }
            return matched;
        }
    }

    /** Hands a free lease to its first live waiter ({@link PgLeaseSql#handOffSql}): after a release that reported waiters. */
    public void handOff(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(notifying().handOffSql())) {
            ps.setString(1, name);
            ps.setString(2, name);
            ps.setString(3, name);
            ps.execute();
            drain(ps);
        }
    }

    /** One exclusive acquire of a batch. */
    public record Acquire(String name, String owner, long ttlMicros) {
    }

    /** One release of a batch: the grant with {@code token}. */
    public record Release(String name, String owner, long token) {
    }

    /**
     * The exclusive acquire of every lease of {@code batch} (distinct names, sorted) in one
     * statement ({@link BatchLeaseSql#acquireAllSql}): the grants it made, by name; a name it did not
     * grant (live) is absent.
     */
    public Map<String, LeaseRow> acquireAll(Connection c, List<Acquire> batch) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(batches().acquireAllSql(batch.size()))) {
            batches().bindRows(c, ps, 1, batch.stream().map(Acquire::name).toList(),
                    batch.stream().map(Acquire::owner).toList(),
                    batch.stream().map(Acquire::ttlMicros).toList());
            Map<String, String> owners = new HashMap<>();
            batch.forEach(a -> owners.put(a.name(), a.owner()));
            Map<String, LeaseRow> granted = new HashMap<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String name = rs.getString(1);
                    String owner = owners.get(name);
                    if (owner != null) {
                        grantedRow(rs, 2, name, owner).ifPresent(lease -> granted.put(name, lease));
                    }
                }
            }
            return granted;
        }
    }

    /**
     * Releases every grant of {@code batch} (distinct names, sorted) in one statement
     * ({@link BatchLeaseSql#releaseAllSql}): for each name it released, whether a waiter may be queued
     * (the caller then {@link #handOff hands off}); a name it did not release is absent.
     *
     * @param fast PostgreSQL only: commit without waiting for the WAL flush (caller checked it is safe)
     */
    public Map<String, Boolean> releaseAll(Connection c, List<Release> batch, boolean fast) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(batches().releaseAllSql(batch.size(), fast))) {
            List<String> names = batch.stream().map(Release::name).toList();
            int first = 1;
            if (!batches().bindsArrays()) {
                for (String name : names) {
                    ps.setString(first++, name); // MariaDB finds the rows by name first
                }
            }
            batches().bindRows(c, ps, first, names, batch.stream().map(Release::owner).toList(),
                    batch.stream().map(Release::token).toList());
            Map<String, Boolean> released = new HashMap<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    released.put(rs.getString(1), rs.getBoolean(2));
                }
            }
            return released;
        }
    }

    /** Extends the caller's live grant (same token); the new expiry, or empty if it is not held. */
    public Optional<Instant> renew(Connection c, String name, String owner, long token, long ttlMicros) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.renewSql())) {
            ps.setLong(1, ttlMicros);
            ps.setString(2, name);
            ps.setString(3, owner);
            ps.setLong(4, token);
            if (sql.renewReturnsExpiry()) {
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? Optional.of(instant(rs, 1)) : Optional.empty();
                }
            }
            if (ps.executeUpdate() != 1) {
                return Optional.empty();
            }
        }
        return read(c, name).filter(l -> l.owner().equals(owner) && l.token() == token).map(LeaseRow::expiresAt);
    }

    /** What a reservation left: the row's token and expiry, and the database's time then. */
    public record Reserved(long token, Instant expiresAt, Instant now) {
    }

    /**
     * Adds {@code tokens} to the live grant's token and extends it to at least {@code ttlMicros}
     * from now ({@link LeaseSql#reserveSql}); empty if that grant is not held (expired, released,
     * broken or granted again).
     */
    public Optional<Reserved> reserve(Connection c, String name, String owner, long token, long tokens, long ttlMicros)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.reserveSql())) {
            ps.setLong(1, tokens);
            ps.setLong(2, ttlMicros);
            ps.setString(3, name);
            ps.setString(4, owner);
            ps.setLong(5, token);
            if (sql.renewReturnsExpiry()) {
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? Optional.of(reserved(rs)) : Optional.empty();
                }
            }
            // A reservation moves the token, so it counts 1 if it matched (affected or found rows
            // alike); an extension alone that changes nothing may count 0 with affected rows.
            if (ps.executeUpdate() == 0 && tokens > 0) {
                return Optional.empty(); // else a later grant whose token happens to be token + tokens would pass
            }
        }
        try (PreparedStatement ps = c.prepareStatement(sql.reservedSql())) {
            ps.setString(1, name);
            ps.setString(2, owner);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                Reserved r = reserved(rs);
                return r.token() == token + tokens && r.expiresAt().isAfter(r.now()) ? Optional.of(r) : Optional.empty();
            }
        }
    }

    private Reserved reserved(ResultSet rs) throws SQLException {
        return new Reserved(rs.getLong(1), instant(rs, 2), instant(rs, 3));
    }

    /** The row of {@code name}, if any, for diagnosing a failure. */
    public Optional<LeaseRow> read(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.readSql())) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(lease(rs)) : Optional.empty();
            }
        }
    }

    /** Leases that are live now, by name. */
    public List<LeaseRow> listLive(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.listLiveSql()); ResultSet rs = ps.executeQuery()) {
            List<LeaseRow> leases = new ArrayList<>();
            while (rs.next()) {
                leases.add(lease(rs));
            }
            return leases;
        }
    }

    /** The row of {@code name} and who broke its last grant, if any: a refused release or renewal in one read. */
    public Optional<Diagnosis> diagnose(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.diagnoseSql())) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                String by = rs.getString(6);
                return Optional.of(new Diagnosis(lease(rs), by == null ? null : new Broken(by, instant(rs, 7))));
            }
        }
    }

    /** A lease row, and who broke its last grant (null if nobody did). */
    public record Diagnosis(LeaseRow lease, @Nullable Broken broken) {
    }

    /** Who broke a lease ({@code by} empty if not named), and when (database time). */
    public record Broken(String by, Instant at) {
    }

    private LeaseRow lease(ResultSet rs) throws SQLException {
        return new LeaseRow(rs.getString(1), rs.getString(2), rs.getLong(3), instant(rs, 4), instant(rs, 5));
    }

    /**
     * An instant this class reads: {@code acquired_at} and {@code expires_at} are NOT NULL, the database's clock is
     * never NULL, and {@code broken_at} is read only with {@code broken_by}, which every statement writes with it.
     */
    private Instant instant(ResultSet rs, int column) throws SQLException {
        return Invariants.nonNull(dialect.readInstant(rs, column), "NULL instant in column " + column);
    }

    /**
     * The grant an acquire returned: its {@code token, acquired_at, expires_at}, or empty for no row;
     * where the acquire returns the final row whatever happened, only if the caller owns it and
     * the statement granted it.
     */
    private Optional<LeaseRow> granted(ResultSet rs, String name, String owner) throws SQLException {
        return rs.next() ? grantedRow(rs, 1, name, owner) : Optional.empty();
    }

    /** {@link #granted} of the current row, whose acquire columns start at column {@code first}. */
    private Optional<LeaseRow> grantedRow(ResultSet rs, int first, String name, String owner) throws SQLException {
        if (sql.acquireReturnsFinalRow() && !(owner.equals(rs.getString(first + 3)) && rs.getBoolean(first + 4))) {
            return Optional.empty();
        }
        return Optional.of(new LeaseRow(name, owner, rs.getLong(first), instant(rs, first + 1), instant(rs, first + 2)));
    }

    /** The notified wait's statements: PostgreSQL's. */
    private PgLeaseSql notifying() {
        return Invariants.nonNull(sql instanceof PgLeaseSql pg ? pg : null, sql.dialect + " waiters poll: no hand-off");
    }

    private BatchLeaseSql batches() {
        return Invariants.nonNull(sql instanceof BatchLeaseSql b ? b : null, sql.dialect + " has no batch statements");
    }

    @FunctionalInterface
    private interface Binder {
        /** Binds the update's parameters; returns the next index. */
        int bind(PreparedStatement ps) throws SQLException;
    }
}
