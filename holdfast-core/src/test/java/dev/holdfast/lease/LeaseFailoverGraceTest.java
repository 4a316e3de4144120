package dev.holdfast.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.lease.internal.PgLeaseSql;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * {@link LeaseService.Builder#failoverGrace}: on a promoted PostgreSQL server nothing is granted until
 * the grace has passed since the first grant statement on the new timeline; renewals and releases go
 * on. The shared test server was never promoted, so these services take timeline 2 as the server's
 * ({@code tune(t -> t.timeline(2))}); a real promotion with lost grants is {@link LeaseFailoverTest}'s.
 * Every "not before" is checked in database time against the recorded start of the timeline.
 */
class LeaseFailoverGraceTest {

    private static final Duration GRACE = Duration.ofMillis(1500);
    private static final Duration TTL = Duration.ofSeconds(1);
    private static final long TIMELINE_2 = 1L << PgLeaseSql.TIMELINE_SHIFT;

    private static LeaseService promoted(TestDatabase db, String table) {
        return LeaseService.builder(db.dataSource())
                .table(table)
                .failoverGrace(GRACE)
                .tune(t -> t.timeline(2))
                .build();
    }

    private static Instant firstSeen(TestDatabase db, String table) throws Exception {
        return instant(db.queryLong("SELECT (extract(epoch FROM first_seen) * 1000000)::bigint FROM " + table
                + "_timelines WHERE timeline = 2"));
    }

    private static Instant databaseNow(TestDatabase db) throws Exception {
        return instant(db.queryLong("SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint"));
    }

    private static Instant instant(long epochMicros) {
        return Instant.EPOCH.plus(epochMicros, ChronoUnit.MICROS);
    }

    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void nothingIsGrantedOnANewTimelineUntilTheGraceHasPassed(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = promoted(db, table)) {
            assertThat(leases.tryAcquire("job", "a", TTL))
                    .as("the first statement on the new timeline")
                    .isEmpty();
            Instant start = firstSeen(db, table);
            assertThat(db.queryLong("SELECT count(*) FROM " + table))
                    .as("nothing written to the lease table")
                    .isZero();

            List<Lease> granted = new ArrayList<>();
            await().atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> {
                        leases.tryAcquire("job", "a", TTL).ifPresent(granted::add);
                        return !granted.isEmpty();
                    });
            Lease lease = granted.get(0);
            assertThat(lease.acquiredAt()).as("granted only after the grace").isAfterOrEqualTo(start.plus(GRACE));
            assertThat(lease.token()).as("a token of the new timeline").isEqualTo(TIMELINE_2);
            assertThat(db.queryLong("SELECT count(*) FROM " + table + "_timelines"))
                    .isEqualTo(1);
            leases.release(lease);
        }
    }

    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void batchedGrantsWaitForTheGraceToo(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = LeaseService.builder(db.dataSource())
                .table(table)
                .failoverGrace(GRACE)
                .batching(Batching.CONCURRENT)
                .tune(t -> t.timeline(2).batchLoneCalls(true))
                .build()) {
            assertThat(leases.tryAcquire("job", "a", TTL)).isEmpty();
            Instant start = firstSeen(db, table);
            List<Lease> granted = new ArrayList<>();
            await().atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> {
                        leases.tryAcquire("job", "a", TTL).ifPresent(granted::add);
                        return !granted.isEmpty();
                    });
            assertThat(granted.get(0).acquiredAt()).isAfterOrEqualTo(start.plus(GRACE));
            assertThat(granted.get(0).token()).isEqualTo(TIMELINE_2);
            leases.release(granted.get(0));
        }
    }

    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void renewalsAndReleasesOfEarlierGrantsGoOnWhileNewGrantsWait(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService before = LeaseFixture.service(db.dataSource(), table);
                LeaseService after = promoted(db, table)) {
            Lease held = before.tryAcquire("held", "a", Duration.ofMinutes(1)).orElseThrow();
            assertThat(after.tryAcquire("other", "b", TTL)).isEmpty();
            Instant start = firstSeen(db, table);

            Lease renewed = after.renew(held, Duration.ofSeconds(1));
            assertThat(renewed.token()).isEqualTo(held.token());
            after.release(renewed);
            Lease released = after.find("held").orElseThrow();
            assertThat(released.expiresAt())
                    .as("released: it ends when it began")
                    .isEqualTo(released.acquiredAt());

            Optional<Lease> taken = after.tryAcquire("held", "b", TTL);
            if (taken.isPresent()) { // only if the grace was over already, on a slow machine
                assertThat(taken.get().acquiredAt()).isAfterOrEqualTo(start.plus(GRACE));
                after.release(taken.get());
            }
        }
    }

    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void aWaiterQueuedInTheGraceIsNotHandedTheLeaseBeforeItEnds(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        ExecutorService executor = Executors.newSingleThreadExecutor();
        try (LeaseService before = LeaseFixture.service(db.dataSource(), table);
                LeaseService after = promoted(db, table)) {
            Lease held = before.tryAcquire("job", "a", Duration.ofMinutes(1)).orElseThrow();
            Future<Lease> waiter = executor.submit(() -> after.acquire("job", "b", TTL, Duration.ofSeconds(30)));
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> db.queryLong("SELECT count(*) FROM " + table + "_queue WHERE name = 'job'") == 1);
            Instant start = firstSeen(db, table);

            after.release(held); // its hand-off is a grant: it waits for the grace too
            Lease lease = waiter.get(30, TimeUnit.SECONDS);
            assertThat(lease.owner()).isEqualTo("b");
            assertThat(lease.acquiredAt())
                    .as("handed over only after the grace")
                    .isAfterOrEqualTo(start.plus(GRACE));
            assertThat(lease.token()).isGreaterThanOrEqualTo(TIMELINE_2);
            after.release(lease);
        } finally {
            executor.shutdownNow();
        }
    }

    /**
     * A release's hand-off locks its waiter's queue row, which the waiter's own statement may hold:
     * a hand-off that began in the grace and waited past its end for that row is stamped when it was
     * made, after the wait (not when its statement began), and lasts its whole TTL from then. Seen in
     * {@link LeaseFastFailoverTest} on a loaded machine: a grant stamped 0.2 s inside the grace. Here
     * a test transaction holds the queue row of a waiter (a listener connection of the test's own)
     * across the end of the grace.
     */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void aHandOffThatWaitedForItsWaiterPastTheGraceIsStampedWhenItWasMade(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        Duration grace = Duration.ofSeconds(3);
        ExecutorService executor = Executors.newSingleThreadExecutor();
        try (LeaseService before = LeaseFixture.service(db.dataSource(), table);
                LeaseService after = LeaseService.builder(db.dataSource())
                        .table(table)
                        .failoverGrace(grace)
                        .tune(t -> t.timeline(2))
                        .build();
                // Connections of the test's own pool: the listener's session lock ends with its connection.
                HikariDataSource own = db.newDirectPool(2);
                Connection listener = own.getConnection();
                Connection blocker = own.getConnection()) {
            Lease held = before.tryAcquire("job", "a", Duration.ofMinutes(1)).orElseThrow();
            assertThat(after.tryAcquire("other", "x", TTL))
                    .as("the first statement on the new timeline")
                    .isEmpty();
            Instant end = firstSeen(db, table).plus(grace);
            // A waiter "b" whose listener connection is alive (it holds the listener lock, as a service's does).
            long pid;
            try (Statement s = listener.createStatement();
                    ResultSet rs = s.executeQuery("SELECT pg_backend_pid(), pg_advisory_lock("
                            + PgLeaseSql.LISTENER_LOCK_KEY + ", pg_backend_pid())")) {
                rs.next();
                pid = rs.getLong(1);
            }
            db.execute("INSERT INTO " + table + "_queue (name, owner, wait_until, lease_owner, ttl_micros, listener)"
                    + " VALUES ('job', 'b', clock_timestamp() + interval '1 minute', 'b', " + TTL.toNanos() / 1000
                    + ", " + pid + ")");
            db.execute("UPDATE " + table
                    + " SET waiters_until = clock_timestamp() + interval '1 minute' WHERE name = 'job'");
            blocker.setAutoCommit(false);
            try (Statement s = blocker.createStatement()) {
                s.executeQuery("SELECT 1 FROM " + table + "_queue WHERE name = 'job' FOR UPDATE")
                        .close();
            }
            await().atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> !databaseNow(db).isBefore(end.minusSeconds(2)));

            Future<?> release = executor.submit(() -> {
                after.release(held);
                return null;
            });
            String handOffWaits = "SELECT (extract(epoch FROM query_start) * 1000000)::bigint FROM pg_stat_activity"
                    + " WHERE wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE OF q%'"
                    + " AND query LIKE '%" + table + "_queue%'";
            await().atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> db.queryLong("SELECT count(*) FROM (" + handOffWaits + ") w") == 1);
            Instant handOffBegan = instant(db.queryLong(handOffWaits));
            assertThat(handOffBegan).as("the hand-off began in the grace").isBefore(end);
            await().atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> databaseNow(db).isAfter(end.plusMillis(200)));
            blocker.rollback();
            release.get(20, TimeUnit.SECONDS);

            long acquired = db.queryLong("SELECT (extract(epoch FROM acquired_at) * 1000000)::bigint FROM " + table
                    + " WHERE name = 'job' AND owner = 'b' AND handed_to = 'b'");
            long expires = db.queryLong(
                    "SELECT (extract(epoch FROM expires_at) * 1000000)::bigint FROM " + table + " WHERE name = 'job'");
            Instant acquiredAt = instant(acquired);
            assertThat(acquiredAt)
                    .as("stamped after the wait, when the grace was over")
                    .isAfter(end.plusMillis(200));
            assertThat(expires - acquired).as("the whole TTL from then").isEqualTo(TTL.toNanos() / 1000);
            assertThat(db.queryLong("SELECT token FROM " + table + " WHERE name = 'job'"))
                    .isGreaterThanOrEqualTo(TIMELINE_2);
        } finally {
            executor.shutdownNow();
        }
    }

    /**
     * A waiter's attempt in the grace inserts no grant, so its upsert locks no lease row; it must
     * still lock the lease row before its queue entry, as every statement does: a release holds the
     * lease row and its hand-off then locks the first waiter's entry, and an attempt holding that
     * entry while it waited for the lease row deadlocked with it (seen in CI: the release failed).
     * Here a test transaction holds the lease row, as a release does, until a re-attempt of the
     * waiter waits for it; the waiter's entry must then be free for the hand-off to lock.
     */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void aWaitersAttemptInTheGraceLocksTheLeaseRowBeforeItsQueueEntry(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        ExecutorService executor = Executors.newSingleThreadExecutor();
        try (LeaseService before = LeaseFixture.service(db.dataSource(), table);
                LeaseService after = LeaseService.builder(db.dataSource())
                        .table(table)
                        .failoverGrace(Duration.ofMinutes(5))
                        .tune(t -> t.timeline(2).safetyPoll(Duration.ofMillis(100)))
                        .build();
                HikariDataSource own = db.newDirectPool(2);
                Connection release = own.getConnection();
                Connection handOff = own.getConnection()) {
            Lease held = before.tryAcquire("job", "a", Duration.ofMinutes(5)).orElseThrow();
            Future<Lease> waiter = executor.submit(() -> after.acquire("job", "b", TTL, Duration.ofMinutes(5)));
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> db.queryLong("SELECT count(*) FROM " + table + "_queue WHERE name = 'job'") == 1);

            release.setAutoCommit(false);
            try (Statement s = release.createStatement()) {
                s.executeQuery("SELECT 1 FROM " + table + " WHERE name = 'job' FOR UPDATE")
                        .close();
            }
            // (By its grant's CTE: pg_stat_activity keeps the first 1024 bytes of a query.)
            String attemptWaits = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    + " AND query LIKE '% a AS (INSERT INTO " + table + " AS l %'";
            await().atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> db.queryLong(attemptWaits) == 1);

            handOff.setAutoCommit(false);
            try (Statement s = handOff.createStatement()) {
                s.executeQuery("SELECT 1 FROM " + table + "_queue WHERE name = 'job' FOR UPDATE NOWAIT")
                        .close();
            } finally {
                handOff.rollback();
            }
            release.rollback();
            await().atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> db.queryLong(attemptWaits) == 0);
            assertThat(waiter).as("still waiting, queued, for the grace to end").isNotDone();
            assertThat(db.queryLong("SELECT count(*) FROM " + table + "_queue WHERE name = 'job'"))
                    .isEqualTo(1);
            waiter.cancel(true);
            before.release(held);
        } finally {
            executor.shutdownNow();
        }
    }

    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void manyCallersOnANewTimelineRecordItOnceAndNeverDeadlock(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        int threads = 16;
        ExecutorService executor = Executors.newFixedThreadPool(threads);
        try (LeaseService leases = LeaseService.builder(db.newPool(threads + 2))
                .table(table)
                .failoverGrace(GRACE)
                .tune(t -> t.timeline(2))
                .build()) {
            List<Future<Lease>> calls = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                String name = "name-" + (i % 4); // four names, four callers each: grants, queues and hand-offs
                String owner = "owner-" + i;
                calls.add(executor.submit(() -> {
                    Lease lease = leases.acquire(name, owner, TTL, Duration.ofSeconds(60));
                    leases.release(lease);
                    return lease;
                }));
            }
            List<Lease> grants = new ArrayList<>();
            for (Future<Lease> call : calls) {
                grants.add(call.get(90, TimeUnit.SECONDS));
            }
            Instant start = firstSeen(db, table);
            assertThat(db.queryLong("SELECT count(*) FROM " + table + "_timelines"))
                    .isEqualTo(1);
            assertThat(grants).allSatisfy(g -> {
                assertThat(g.acquiredAt()).isAfterOrEqualTo(start.plus(GRACE));
                assertThat(g.token()).isGreaterThanOrEqualTo(TIMELINE_2);
            });
        } finally {
            executor.shutdownNow();
        }
    }

    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void theFirstTimelineHasNoGrace(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = LeaseService.builder(db.dataSource())
                .table(table)
                .failoverGrace(GRACE)
                .tune(t -> t.timeline(1))
                .build()) {
            Lease lease = leases.tryAcquire("job", "a", TTL).orElseThrow();
            assertThat(lease.token()).isEqualTo(1);
            leases.release(lease);
            assertThat(db.queryLong("SELECT count(*) FROM " + table + "_timelines"))
                    .isZero();
        }
    }

    /** The documented setting: a TTL above the bound is refused before any SQL (no table needed). */
    @DatabaseTest
    void theDocumentedSettingBoundsEveryTtl(TestDatabase db) {
        javax.sql.DataSource dataSource = db.dataSource();
        // tag::failover-grace[]
        LeaseService leases = LeaseService.builder(dataSource)
                .failoverGrace(Duration.ofMinutes(5))   // the longest TTL of every service of the table
                .build();
        // end::failover-grace[]
        try (leases) {
            assertThatThrownBy(() -> leases.tryAcquire("nightly-invoices", "server-7", Duration.ofMinutes(6)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("PT5M");
        }
    }

    /** The grace is the longest TTL: a longer one is refused before any SQL, on every database. */
    @DatabaseTest
    void aTtlLongerThanTheGraceIsRefusedAndChangesNothing(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = LeaseService.builder(db.dataSource())
                .table(table)
                .failoverGrace(GRACE)
                .build()) {
            Duration longer = GRACE.plusMillis(1);
            assertThatThrownBy(() -> leases.tryAcquire("job", "a", longer))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("failover grace");
            assertThatThrownBy(() -> leases.acquire("job", "a", longer, Duration.ofSeconds(1)))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> leases.tryAcquireOrRenew("job", "a", longer))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThat(db.queryLong("SELECT count(*) FROM " + table))
                    .as("nothing granted")
                    .isZero();

            Lease lease = leases.tryAcquire("job", "a", GRACE).orElseThrow();
            assertThatThrownBy(() -> leases.renew(lease, longer)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> leases.keepAlive(lease, longer, null))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThat(leases.find("job")).as("still the grant, unchanged").contains(lease);
            leases.release(lease);
        }
        assertThatThrownBy(() -> LeaseService.builder(db.dataSource()).failoverGrace(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
