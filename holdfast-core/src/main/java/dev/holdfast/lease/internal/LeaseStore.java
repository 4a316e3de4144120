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

/**
 * The leases of one database: its statements ({@link #sql()}), how they are bound and their results
 * read, and how its waiters are woken. One store per database, chosen once by {@link LeaseStores#forDialect}:
 * {@link PgLeaseStore}, {@link MariaDbLeaseStore}, {@link H2LeaseStore}. It runs on a connection it is
 * given; one statement (one round trip) per operation, or per batch of them, but a MariaDB renewal
 * (an update, then a read).
 */
public abstract sealed class LeaseStore permits PgLeaseStore, MariaDbLeaseStore, H2LeaseStore {

    private final LeaseSql sql;
    private final Dialect dialect;
    /** The release's eight forms, built once: indexed by {@link #releaseForm}. */
    private final String[] releases = new String[8];
    /** Names whose last release by this service found waiters: their next one hands off in its round trip. */
    final ContendedNames contended = new ContendedNames();

    LeaseStore(LeaseSql sql) {
        this.sql = sql;
        this.dialect = sql.dialect;
        for (int form = 0; form < releases.length; form++) {
            releases[form] = sql.releaseSql((form & 4) != 0, (form & 2) != 0, (form & 1) != 0);
        }
    }

    /** The statements this store runs. */
    public LeaseSql sql() {
        return sql;
    }

    /**
     * How this database's waiters are woken, for a service with settings {@code s}: its polling waiters
     * are {@code pollers}, its background work runs on {@code threads}.
     */
    abstract WakeUps wakeUps(LeaseSettings s, LocalPollers pollers, LeaseThreads threads);

    /** The multi-row statements, or null where calls are never batched (H2). */
    @Nullable
    BatchLeaseSql batchSql() {
        return null;
    }

    /**
     * Whether a release that a batch made leaves a lease that a waiter may wait for to a release of
     * its own, which hands it on (MariaDB).
     */
    boolean handsOnAfterBatch() {
        return false;
    }

    private static int releaseForm(boolean withToken, boolean heldAtLeast, boolean relaxed) {
        return (withToken ? 4 : 0) | (heldAtLeast ? 2 : 0) | (relaxed ? 1 : 0);
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
    public Optional<LeaseRow> acquireOrQueue(
            Connection c,
            String name,
            String owner,
            String waiter,
            long ttlMicros,
            long queueMicros,
            boolean joined,
            @Nullable Integer listener)
            throws SQLException {
        return acquireOrQueue(c, name, owner, waiter, ttlMicros, queueMicros, joined, true, true, listener);
    }

    /** The attempt above: with a queue of statements of its own, a waiter that {@code joined} refreshes only if {@code refresh}, leaves only if {@code leave}. */
    public abstract Optional<LeaseRow> acquireOrQueue(
            Connection c,
            String name,
            String owner,
            String waiter,
            long ttlMicros,
            long queueMicros,
            boolean joined,
            boolean refresh,
            boolean leave,
            @Nullable Integer listener)
            throws SQLException;

    /**
     * The queue in statements of their own (waiters poll): the acquire that respects the queue, then
     * leaving the queue on a grant (if {@code leave}) or joining it (refreshing its entry) on a
     * refusal (if {@code join}). On a manual-commit pool they commit together; in auto-commit mode a
     * failure between them leaves at most an entry that lapses within {@code queueMicros}.
     */
    final Optional<LeaseRow> acquireThenQueue(
            PollingLeaseSql polling,
            Connection c,
            String name,
            String owner,
            String waiter,
            long ttlMicros,
            long queueMicros,
            boolean leave,
            boolean join,
            @Nullable Integer listener)
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
                servedPast = granted.isEmpty() && servedPast(rs);
            }
        }
        if (servedPast) { // refused, and no release will hand it the lease: joins again behind the mark
            requeue(c, name, waiter);
        }
        if (granted.isPresent()) {
            if (leave) {
                sql.leaveQueue(c, name, waiter);
            }
        } else if (join) {
            polling.join(c, name, waiter, queueMicros, owner, ttlMicros, listener);
        }
        return granted;
    }

    /** Whether a refused queued acquire's waiter stands behind a mark no release hands past (MariaDB). */
    boolean servedPast(ResultSet rs) throws SQLException {
        return false;
    }

    /** Moves a waiter {@link #servedPast} behind the mark (MariaDB). */
    void requeue(Connection c, String name, String waiter) throws SQLException {
        throw new IllegalStateException(dialect + " keeps no served mark");
    }

    /**
     * Removes a waiter that gave up; where releases hand the lease to waiters, also gives back a
     * grant handed to it meanwhile (which then goes to the next waiter), unless its call was {@code granted}.
     */
    public void giveUp(Connection c, String name, String waiter, boolean granted) throws SQLException {
        sql.leaveQueue(c, name, waiter);
    }

    static void drain(PreparedStatement ps) throws SQLException {
        while (ps.getMoreResults() || ps.getUpdateCount() != -1) {
            // the remaining statements' results
        }
    }

    /**
     * Expires the caller's live grant; true if it was held.
     *
     * @param token null to match any grant of {@code owner}
     * @param relaxed  PostgreSQL only: commit without waiting for the WAL flush (caller checked it is safe)
     */
    public boolean release(
            Connection c,
            String name,
            String owner,
            @Nullable Long token,
            boolean relaxed,
            @Nullable Long heldAtLeastMicros)
            throws SQLException {
        boolean withHandOff = contended.contains(name);
        String release = releases[releaseForm(token != null, heldAtLeastMicros != null, relaxed && !withHandOff)];
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
        return runRelease(c, name, owner, token, heldAtLeastMicros, withHandOff, release, bind);
    }

    /** The release once its statement is chosen and bound by {@code bind}: an update (PostgreSQL: then the hand-off). */
    boolean runRelease(
            Connection c,
            String name,
            String owner,
            @Nullable Long token,
            @Nullable Long heldAtLeastMicros,
            boolean withHandOff,
            String release,
            Binder bind)
            throws SQLException {
        return update(c, release, name, withHandOff, bind);
    }

    /** Expires a live lease whoever holds it, recording {@code by} (null: an unnamed operator); true if there was one. */
    public boolean forceRelease(Connection c, String name, @Nullable String by) throws SQLException {
        return update(c, sql.forceReleaseSql(), name, contended.contains(name), ps -> {
            ps.setString(1, by == null ? "" : by);
            ps.setString(2, name);
            return 3;
        });
    }

    /**
     * Runs an update that matches at most one row; true if it matched. Where releases report waiters
     * (PostgreSQL), also hands off, and with {@code withHandOff} (the last release of this name in
     * this service found waiters) in the same round trip.
     */
    boolean update(Connection c, String update, String name, boolean withHandOff, Binder bind) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(update)) {
            bind.bind(ps);
            return ps.executeUpdate() == 1;
        }
    }

    /** Hands a free lease to its first live waiter: after a batch release that reported waiters (PostgreSQL). */
    public void handOff(Connection c, String name) throws SQLException {
        throw new IllegalStateException(dialect + " waiters poll: no hand-off");
    }

    /** One exclusive acquire of a batch. */
    public record Acquire(String name, String owner, long ttlMicros) {}

    /** One release of a batch: the grant with {@code token}. */
    public record Release(String name, String owner, long token) {}

    /**
     * The exclusive acquire of every lease of {@code batch} (distinct names, sorted) in one
     * statement ({@link BatchLeaseSql#acquireAllSql}): the grants it made, by name; a name it did not
     * grant (live) is absent.
     */
    public Map<String, LeaseRow> acquireAll(Connection c, List<Acquire> batch) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(batches().acquireAllSql(batch.size()))) {
            batches()
                    .bindRows(
                            c,
                            ps,
                            1,
                            batch.stream().map(Acquire::name).toList(),
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
     * @param relaxed PostgreSQL only: commit without waiting for the WAL flush (caller checked it is safe)
     */
    public Map<String, Boolean> releaseAll(Connection c, List<Release> batch, boolean relaxed) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(batches().releaseAllSql(batch.size(), relaxed))) {
            List<String> names = batch.stream().map(Release::name).toList();
            int first = 1;
            if (!batches().bindsArrays()) {
                for (String name : names) {
                    ps.setString(first++, name); // MariaDB finds the rows by name first
                }
            }
            batches()
                    .bindRows(
                            c,
                            ps,
                            first,
                            names,
                            batch.stream().map(Release::owner).toList(),
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
    public Optional<Instant> renew(Connection c, String name, String owner, long token, long ttlMicros)
            throws SQLException {
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
        return read(c, name)
                .filter(l -> l.owner().equals(owner) && l.token() == token)
                .map(LeaseRow::expiresAt);
    }

    /** What a reservation left: the row's token and expiry, and the database's time then. */
    public record Reserved(long token, Instant expiresAt, Instant now) {}

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
                return r.token() == token + tokens && r.expiresAt().isAfter(r.now())
                        ? Optional.of(r)
                        : Optional.empty();
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
        try (PreparedStatement ps = c.prepareStatement(sql.listLiveSql());
                ResultSet rs = ps.executeQuery()) {
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
    public record Diagnosis(LeaseRow lease, @Nullable Broken broken) {}

    /** Who broke a lease ({@code by} empty if not named), and when (database time). */
    public record Broken(String by, Instant at) {}

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
    final Optional<LeaseRow> granted(ResultSet rs, String name, String owner) throws SQLException {
        return rs.next() ? grantedRow(rs, 1, name, owner) : Optional.empty();
    }

    /** {@link #granted} of the current row, whose acquire columns start at column {@code first}. */
    private Optional<LeaseRow> grantedRow(ResultSet rs, int first, String name, String owner) throws SQLException {
        if (sql.acquireReturnsFinalRow() && !(owner.equals(rs.getString(first + 3)) && rs.getBoolean(first + 4))) {
            return Optional.empty();
        }
        return Optional.of(
                new LeaseRow(name, owner, rs.getLong(first), instant(rs, first + 1), instant(rs, first + 2)));
    }

    private BatchLeaseSql batches() {
        return Invariants.nonNull(batchSql(), dialect + " has no batch statements");
    }

    @FunctionalInterface
    interface Binder {
        /** Binds the update's parameters; returns the next index. */
        int bind(PreparedStatement ps) throws SQLException;
    }
}
