package dev.holdfast.lease;

import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.testing.FaultDatabase;
import dev.holdfast.testing.TestDatabase;
import org.jspecify.annotations.Nullable;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The independent checker of the lease fault tests. It knows nothing of the library's internals:
 * every grant the application saw, an event log written in database time (grant, end of work
 * before release) on its own pool, and fenced writes to a resource row per lease name that count
 * up ({@code val = val + 1} under the token). From these alone it counts
 * <ul>
 *   <li>stale writes accepted: an accepted write whose token is lower than an earlier accepted one,</li>
 *   <li>lost or duplicated updates: the accepted values of a name repeat, or the row's counter is not
 *       their number (plus at most the writes whose connection died before the client learned the outcome),</li>
 *   <li>token repeats: two grants of a name with one token (a holder re-entering its own grant,
 *       same owner, token and start, is one grant),</li>
 *   <li>overlaps: a holder that began to count on its grant (database time) before the holder of the
 *       previous token ended its work or reached its last confirmed expiry, whichever came first.</li>
 * </ul>
 */
final class FaultChecker {

    /**
     * @param acquiredAt as the database recorded it
     * @param start      when the holder began to count on it: its "grant" event (database time, logged
     *                   right after the acquire returned), or null if that could not be logged (its
     *                   connection lost in a restart). Not {@code acquiredAt}: both databases stamp a
     *                   grant with the start of its statement, so a grant that waited for the previous
     *                   holder's release on the row lock records an {@code acquiredAt} slightly before
     *                   that release (seen on MariaDB, and on PostgreSQL when the log failed right after
     *                   a restart); the event is the moment the holder could act.
     */
    record Grant(
            String name,
            String owner,
            long token,
            Instant acquiredAt,
            @Nullable Instant start) {}

    record Write(String name, long token, long value) {}

    record Report(
            long grants,
            long acceptedWrites,
            long refusedWrites,
            long staleAccepted,
            long lostOrDuplicated,
            long tokenRepeats,
            long overlaps,
            long unknownStarts) {
        @Override
        public String toString() {
            return grants + " grants, " + acceptedWrites + " accepted fenced writes, " + refusedWrites + " refused;"
                    + " stale writes accepted " + staleAccepted + ", lost/duplicated updates " + lostOrDuplicated
                    + ", token repeats " + tokenRepeats + ", overlapping live holders " + overlaps
                    + " (" + unknownStarts + " grants whose start could not be logged not judged)";
        }

        /** None of the violations the checker counts: stale or lost writes, repeated tokens, overlapping holders. */
        void assertNoViolation() {
            assertThat(staleAccepted).as("stale writes accepted").isZero();
            assertThat(lostOrDuplicated).as("lost or duplicated updates").isZero();
            assertThat(tokenRepeats).as("token repeats").isZero();
            assertThat(overlaps).as("overlapping live holders").isZero();
            assertThat(unknownStarts)
                    .as("grants not judged for overlap (start not logged)")
                    .isLessThanOrEqualTo(grants / 10);
        }
    }

    private final FaultDatabase db;
    private final String resource;
    private final String events;
    private final FencedUpdate write;
    private final Queue<Grant> grants = new ConcurrentLinkedQueue<>();
    private final Set<String> seen = ConcurrentHashMap.newKeySet();
    private final Queue<Write> accepted = new ConcurrentLinkedQueue<>();
    private final AtomicLong refused = new AtomicLong();
    private final Map<String, AtomicLong> uncertain = new ConcurrentHashMap<>();
    /** Per "name/token": the earliest moment (database time) its holder stopped counting on it. */
    private final Map<String, Instant> liveUntil = new ConcurrentHashMap<>();

    FaultChecker(FaultDatabase db, String... names) throws SQLException {
        this.db = db;
        this.resource = db.newTableName("fault_res");
        this.events = db.newTableName("fault_events");
        boolean pg = db.kind() == TestDatabase.Kind.POSTGRESQL;
        db.execute(FencedWork.createTableSql(resource));
        db.execute("CREATE TABLE " + events + " (id " + (pg ? "BIGSERIAL" : "BIGINT AUTO_INCREMENT") + " PRIMARY KEY,"
                + " name VARCHAR(50) NOT NULL, owner VARCHAR(50) NOT NULL, token BIGINT NOT NULL,"
                + " kind VARCHAR(10) NOT NULL, at_micros BIGINT NOT NULL)");
        for (String name : names) {
            db.execute("INSERT INTO " + resource + " (name, val) VALUES (?, 0)", name);
        }
        this.write = FencedUpdate.of(resource, "name", "fence", "val", "holder");
    }

    /** A new lease table on the fault server (and, on PostgreSQL, its queue), dropped after the test. */
    static String installLeases(FaultDatabase db) {
        String table = db.newTableName("fault_lease");
        db.dropAfterTest(table + "_queue");
        new SchemaInstaller(db.admin()).install(HoldfastTable.LEASES, table);
        return table;
    }

    /** The database's clock now, in epoch microseconds (the checker's time base). */
    private String nowMicros() {
        return db.kind() == TestDatabase.Kind.POSTGRESQL
                ? "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)"
                : "CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED)";
    }

    /** The database's clock now. */
    Instant dbNow() throws SQLException {
        return micros(db.queryLong("SELECT " + nowMicros()));
    }

    private static Instant micros(long micros) {
        return Instant.ofEpochSecond(micros / 1_000_000, (micros % 1_000_000) * 1000);
    }

    /** Records a grant the application received; its live time is bounded by its expiry until told more. */
    void granted(Lease lease) {
        String key = lease.name() + "/" + lease.owner() + "/" + lease.token() + "/" + lease.acquiredAt();
        if (!seen.add(key)) {
            renewed(lease); // the same owner re-entered its own grant (same token, same start): an extension
            return;
        }
        Instant logged = tryLog(lease.name(), lease.owner(), lease.token(), "grant");
        grants.add(new Grant(lease.name(), lease.owner(), lease.token(), lease.acquiredAt(), logged));
        bound(lease.name(), lease.token(), lease.expiresAt());
    }

    /** The holder learned of a later confirmed expiry (a renewal). */
    void renewed(Lease lease) {
        liveUntil.compute(
                lease.name() + "/" + lease.token(),
                (k, old) -> old == null || lease.expiresAt().isAfter(old) ? lease.expiresAt() : old);
    }

    /**
     * The holder stops counting on the grant: logs "end" in database time. Call before the release.
     *
     * @return false if the log could not be written (the database is down): then do not release,
     *         and the grant counts as live until its last confirmed expiry
     */
    boolean ended(Lease lease) {
        Instant at = tryLog(lease.name(), lease.owner(), lease.token(), "end");
        if (at == null) {
            return false;
        }
        bound(lease.name(), lease.token(), at);
        return true;
    }

    /** The holder's guard stopped counting on the grant at its last confirmed expiry (it was lost). */
    void lostAt(Lease lease, Instant lastConfirmedExpiry) {
        liveUntil.put(lease.name() + "/" + lease.token(), lastConfirmedExpiry);
    }

    private void bound(String name, long token, Instant at) {
        liveUntil.merge(name + "/" + token, at, (a, b) -> a.isBefore(b) ? a : b);
    }

    private Instant tryLog(String name, String owner, long token, String kind) {
        try (Connection c = db.admin().getConnection();
                PreparedStatement ps =
                        c.prepareStatement("INSERT INTO " + events + " (name, owner, token, kind, at_micros)"
                                + " VALUES (?, ?, ?, ?, " + nowMicros() + ") RETURNING at_micros")) {
            ps.setString(1, name);
            ps.setString(2, owner);
            ps.setLong(3, token);
            ps.setString(4, kind);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return micros(rs.getLong(1));
            }
        } catch (SQLException e) {
            return null;
        }
    }

    /**
     * A fenced write by {@code owner} with {@code token} through the application's pool: reads the
     * counter and writes counter + 1 if no newer token wrote the row.
     *
     * @return whether the database accepted it
     */
    boolean write(DataSource pool, String name, String owner, long token) throws SQLException {
        try (Connection c = pool.getConnection()) {
            return write(c, name, owner, token);
        }
    }

    /** As {@link #write(DataSource, String, String, long)}, on a connection the caller holds. */
    boolean write(Connection c, String name, String owner, long token) throws SQLException {
        long value = FencedWork.counter(c, resource, name);
        boolean written;
        try {
            written = write.update(c, token, name, value + 1, owner);
        } catch (SQLException e) {
            // The connection died around the UPDATE: it may or may not have committed.
            uncertain.computeIfAbsent(name, k -> new AtomicLong()).incrementAndGet();
            throw e;
        }
        if (written) {
            accepted.add(new Write(name, token, value + 1));
            tryLog(name, owner, token, "write");
            return true;
        }
        refused.incrementAndGet();
        tryLog(name, owner, token, "refused");
        return false;
    }

    /** Checks everything recorded so far against the database's rows. */
    Report check() throws SQLException {
        long stale = 0;
        long lostOrDuplicated = 0;
        long repeats = 0;
        long overlaps = 0;
        long unknownStarts = 0;
        List<String> names = grants.stream().map(Grant::name).distinct().toList();
        for (String name : accepted.stream().map(Write::name).distinct().toList()) {
            List<Write> writes = accepted.stream()
                    .filter(w -> w.name().equals(name))
                    .sorted(Comparator.comparingLong(Write::value))
                    .toList();
            // A write whose outcome the client never learned may have counted up unseen: a gap, no more.
            long maybe = uncertain.getOrDefault(name, new AtomicLong()).get();
            long previous = 0;
            for (int i = 0; i < writes.size(); i++) {
                if (writes.get(i).value() <= previous) {
                    lostOrDuplicated++;
                }
                previous = writes.get(i).value();
                if (i > 0 && writes.get(i).token() < writes.get(i - 1).token()) {
                    stale++;
                }
            }
            long unseen = db.queryLong("SELECT val FROM " + resource + " WHERE name = ?", name) - writes.size();
            if (unseen < 0 || unseen > maybe || previous > writes.size() + maybe) {
                lostOrDuplicated++;
            }
        }
        for (String name : names) {
            List<Grant> byToken = new ArrayList<>(grants.stream()
                    .filter(g -> g.name().equals(name))
                    .sorted(Comparator.comparingLong(Grant::token))
                    .toList());
            for (int i = 1; i < byToken.size(); i++) {
                Grant previous = byToken.get(i - 1);
                Grant next = byToken.get(i);
                if (next.token() == previous.token()) {
                    repeats++;
                    System.out.printf("[%s] TOKEN REPEAT: %s and %s%n", db.id(), previous, next);
                    continue;
                }
                Instant until = liveUntil.get(name + "/" + previous.token());
                Instant start = next.start();
                if (start == null) {
                    unknownStarts++;
                    continue;
                }
                if (until != null && start.isBefore(until)) {
                    overlaps++;
                    System.out.printf("[%s] OVERLAP: %s began before %s ended (%s)%n", db.id(), next, previous, until);
                }
            }
        }
        return new Report(
                grants.size(),
                accepted.size(),
                refused.get(),
                stale,
                lostOrDuplicated,
                repeats,
                overlaps,
                unknownStarts);
    }
}
