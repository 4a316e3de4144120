package dev.holdfast.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.DatabaseException;
import dev.holdfast.PgReplicaPair;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.lease.LeaseFailoverTest.Grant;
import dev.holdfast.lease.LeaseFailoverTest.Write;
import dev.holdfast.lease.internal.PgLeaseSql;
import dev.holdfast.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The asynchronous-replication gap, and {@link LeaseService.Builder#failoverGrace} closing it: a
 * failover much faster than the TTL. A fresh asynchronous pair ({@code scripts/pg-replica.sh up async});
 * 16 workers, each with a pool and a service of its own, take eight names with a TTL of 15 s and hold
 * each grant for 0.2–1.2 s of work (a fenced write to the test matrix's PostgreSQL server, outside the
 * failing pair). The standby's stream is cut 1.5 s before the primary is stopped ({@code SIGQUIT}) and
 * the standby promoted ({@code pg_promote}), which takes about a second: every grant of those 1.5 s is
 * lost, and those whose holders were still working when the primary stopped never heard their
 * release acknowledged, so their holders rightly count on them until they expire.
 *
 * <p>The checker: a lost grant is of the old timeline with a token above what the standby had
 * replayed; an <em>overlap</em> is a grant of the new primary that began (database time) before such an
 * unreleased lost grant of the same name expired. Without the grace the new primary grants those
 * names at once: overlaps (the gap the failover document states). With the grace (longest TTL 15 s)
 * nothing is granted until 15 s after the first grant statement on the new timeline: no overlap, at
 * the price of refusals for that long, reported. Both modes also check what
 * {@link LeaseFailoverTest} checks: no stale write accepted, token order, no two live holders among
 * grants the new primary knew of.
 */
@ExtendWith(PgReplicaPair.Exclusive.class)
class LeaseFastFailoverTest {

    private static final int WORKERS = 16;
    /**
     * Longer than the failover takes, on a busy machine too: from the stop to a promoted standby took about 1 s idle
     * and 6.9–7.3 s with both cores saturated ({@code stress-ng --cpu 2}), when a TTL of 6 s let the lost grants expire first.
     */
    private static final Duration TTL = Duration.ofSeconds(15);

    private static final String[] NAMES = {"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"};
    private static final long RUN_BEFORE_MILLIS = 3_000;
    private static final long CUT_MILLIS = 1_500;
    private static final long NEW_TIMELINE = 1L << PgLeaseSql.TIMELINE_SHIFT;

    @AfterAll
    static void removePair() {
        if (PgReplicaPair.scriptPresent()) {
            PgReplicaPair.script("down");
        }
    }

    @ParameterizedTest(name = "failover grace {0}")
    @ValueSource(booleans = {false, true})
    void aFailoverFasterThanTheTtl(boolean grace) throws Exception {
        PgReplicaPair.script("up", "async");
        LeaseFailoverTest.createAppRole();
        String table = "lease_fast_failover";
        String resource =
                "fast_failover_res_" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 24, 36);
        List<HikariDataSource> pools = new ArrayList<>();
        List<LeaseService> services = new ArrayList<>();
        try (HikariDataSource admin = LeaseFailoverTest.adminPool("fast-failover-admin");
                HikariDataSource resources =
                        TestDatabase.Kind.POSTGRESQL.newPool("fast-failover-resource", WORKERS + 2)) {
            new SchemaInstaller(admin).install(HoldfastTable.LEASES, table);
            try (Connection c = resources.getConnection();
                    Statement s = c.createStatement()) {
                s.execute(FencedWork.createTableSql(resource));
                for (String name : NAMES) {
                    s.execute("INSERT INTO " + resource + " (name, val) VALUES ('" + name + "', 0)");
                }
            }
            try {
                for (int i = 0; i < WORKERS; i++) {
                    HikariDataSource pool = LeaseFailoverTest.pool(PgReplicaPair.url(), 3, "fast-failover-worker-" + i);
                    pools.add(pool);
                    LeaseService.Builder builder = LeaseService.builder(pool).table(table);
                    services.add((grace ? builder.failoverGrace(TTL) : builder).build());
                }
                run(grace, table, resource, resources, services);
            } finally {
                services.forEach(LeaseService::close);
                pools.forEach(HikariDataSource::close);
                try (Connection c = resources.getConnection();
                        Statement s = c.createStatement()) {
                    s.execute("DROP TABLE IF EXISTS " + resource);
                }
            }
        }
    }

    private void run(
            boolean grace, String table, String resource, HikariDataSource resources, List<LeaseService> services)
            throws Exception {
        FencedWork work = new FencedWork(resource, new FencedWork.Pause(1_000_000, TTL, 0, 1));
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong typedErrors = new AtomicLong();
        AtomicLong refusedWrites = new AtomicLong();
        AtomicLong pauses = new AtomicLong();
        Queue<Grant> grants = new ConcurrentLinkedQueue<>();
        Queue<Grant> unreleased = new ConcurrentLinkedQueue<>();
        Queue<Write> accepted = new ConcurrentLinkedQueue<>();
        Queue<String> unexpected = new ConcurrentLinkedQueue<>();
        Map<String, java.util.concurrent.atomic.AtomicReference<Grant>> live = new HashMap<>();
        for (String name : NAMES) {
            live.put(name, new java.util.concurrent.atomic.AtomicReference<>());
        }
        Queue<Grant[]> liveOverlaps = new ConcurrentLinkedQueue<>();

        ExecutorService executor = Executors.newFixedThreadPool(WORKERS);
        List<Future<?>> futures = new ArrayList<>();
        for (int w = 0; w < WORKERS; w++) {
            int worker = w;
            futures.add(executor.submit(() -> {
                LeaseService leases = services.get(worker);
                String owner = "worker-" + worker;
                ThreadLocalRandom random = ThreadLocalRandom.current();
                while (!stop.get()) {
                    String name = NAMES[random.nextInt(NAMES.length)];
                    Lease lease;
                    try {
                        Optional<Lease> granted =
                                FencedWork.acquire(leases, worker, name, owner, TTL, Duration.ofSeconds(1));
                        if (granted.isEmpty()) {
                            Thread.sleep(10); // an application retries a little later
                            continue;
                        }
                        lease = granted.get();
                    } catch (LeaseTimeoutException e) {
                        continue;
                    } catch (DatabaseException e) {
                        typedErrors.incrementAndGet();
                        Thread.sleep(20); // backs off while the database is away, as an application would
                        continue;
                    }
                    Grant mine = new Grant(
                            name, owner, lease.token(), lease.acquiredAt(), lease.expiresAt(), System.nanoTime());
                    grants.add(mine);
                    List<Grant> overlap = FencedWork.overlap(live.get(name), mine);
                    if (!overlap.isEmpty()) {
                        liveOverlaps.add(new Grant[] {overlap.get(0), overlap.get(1)});
                    }
                    Thread.sleep(200 + random.nextInt(1_000)); // the work the lease protects
                    try (Connection c = resources.getConnection()) {
                        FencedWork.Outcome outcome = work.section(c, name, owner, lease.token(), pauses);
                        if (outcome.accepted()) {
                            accepted.add(new Write(name, lease.token(), outcome.written()));
                        } else {
                            refusedWrites.incrementAndGet();
                        }
                    } catch (SQLException e) {
                        unexpected.add("resource store: " + e);
                    }
                    live.get(name).compareAndSet(mine, null);
                    try {
                        leases.release(lease);
                    } catch (LeaseNotHeldException e) { // includes LeaseExpiredException
                        unreleased.add(mine);
                    } catch (DatabaseException e) {
                        typedErrors.incrementAndGet();
                        unreleased.add(mine); // never acknowledged: its holder counts on it until it expires
                    }
                }
                return null;
            }));
        }

        Thread.sleep(RUN_BEFORE_MILLIS); // the workers run a while on the old primary
        PgReplicaPair.script("cut-standby");
        Thread.sleep(CUT_MILLIS); // a stretch of grants the standby never gets
        long stopNanos = System.nanoTime();
        PgReplicaPair.script("stop-primary");
        Map<String, Long> survived = LeaseFailoverTest.replayedTokens(table);
        PgReplicaPair.script("promote");
        long promotedNanos = System.nanoTime();
        Instant promotedAt = databaseNow();
        // long enough for grants after the grace: it ends one TTL after the first statement on the new primary
        boolean grantedAfter = LeaseFixture.holdsWithin(
                Duration.ofSeconds(60),
                Duration.ofMillis(100),
                () -> grants.stream().anyMatch(g -> g.token() >= NEW_TIMELINE));
        stop.set(true);
        for (Future<?> f : futures) {
            f.get(30, TimeUnit.SECONDS);
        }
        executor.shutdownNow();

        assertThat(grantedAfter)
                .as("grants on the new primary, without restarting anything")
                .isTrue();
        List<Grant> all = new ArrayList<>(grants);
        List<Grant> lost = all.stream()
                .filter(g -> g.token() < NEW_TIMELINE && g.token() > survived.getOrDefault(g.name(), 0L))
                .toList();
        List<Grant> unreleasedLost = lost.stream().filter(unreleased::contains).toList();
        List<Grant> after = all.stream().filter(g -> g.token() >= NEW_TIMELINE).toList();
        List<Grant[]> lostOverlaps = new ArrayList<>();
        for (Grant l : unreleasedLost) {
            for (Grant n : after) {
                if (n.name().equals(l.name()) && n.acquiredAt().isBefore(l.expiresAt())) {
                    lostOverlaps.add(new Grant[] {l, n});
                }
            }
        }
        Instant firstNew = after.stream()
                .map(Grant::acquiredAt)
                .min(Comparator.naturalOrder())
                .orElseThrow();
        Instant lastLostExpiry = unreleasedLost.stream()
                .map(Grant::expiresAt)
                .max(Comparator.naturalOrder())
                .orElse(Instant.EPOCH);
        Instant timelineSeen = grace ? timelineFirstSeen(table) : null;

        long staleAccepted = 0;
        for (String name : NAMES) {
            List<Write> writes = accepted.stream()
                    .filter(x -> x.name().equals(name))
                    .sorted(Comparator.comparingLong(Write::value))
                    .toList();
            for (int i = 1; i < writes.size(); i++) {
                if (writes.get(i).token() < writes.get(i - 1).token()) {
                    staleAccepted++;
                }
            }
        }
        long tokenDisorder = LeaseFailoverTest.tokenDisorder(all, NAMES);
        List<Grant[]> keptOverlaps =
                liveOverlaps.stream().filter(p -> !lost.contains(p[0])).toList();

        System.out.printf(
                "[fast failover, grace %s] grants %d before / %d after; lost %d, of them unreleased %d;"
                        + " promotion done %d ms after the stop; first new grant %d ms after the promotion (database time);"
                        + " the last unreleased lost grant expired %d ms after the promotion; overlaps with lost grants %d;"
                        + " %s; typed errors %d; writes accepted %d, refused by the fence %d; stale writes accepted %d;"
                        + " token order violations %d; two live holders among kept grants %d%n",
                grace,
                all.size() - after.size(),
                after.size(),
                lost.size(),
                unreleasedLost.size(),
                TimeUnit.NANOSECONDS.toMillis(promotedNanos - stopNanos),
                Duration.between(promotedAt, firstNew).toMillis(),
                Duration.between(promotedAt, lastLostExpiry).toMillis(),
                lostOverlaps.size(),
                timelineSeen == null
                        ? "no grace"
                        : "grace from "
                                + Duration.between(promotedAt, timelineSeen).toMillis()
                                + " ms after the promotion, first new grant "
                                + Duration.between(timelineSeen, firstNew).toMillis()
                                + " ms after its start",
                typedErrors.get(),
                accepted.size(),
                refusedWrites.get(),
                staleAccepted,
                tokenDisorder,
                keptOverlaps.size());

        assertThat(unexpected).as("unexpected failures").isEmpty();
        assertThat(staleAccepted).as("stale writes accepted").isZero();
        assertThat(tokenDisorder).as("token order violations").isZero();
        assertThat(keptOverlaps)
                .as("two live holders among grants the new primary knew of")
                .isEmpty();
        assertThat(unreleasedLost)
                .as("lost grants whose holders were still at work when the primary stopped")
                .isNotEmpty();
        assertThat(lastLostExpiry)
                .as("the failover was faster than the TTL: lost grants outlived the promotion")
                .isAfter(promotedAt);
        if (grace) {
            assertThat(lostOverlaps)
                    .as("new grants overlapping a lost grant, with the grace")
                    .isEmpty();
            assertThat(firstNew).as("nothing granted within the grace").isAfterOrEqualTo(timelineSeen.plus(TTL));
        } else {
            assertThat(lostOverlaps)
                    .as("without the grace the gap is real: new grants overlap lost ones")
                    .isNotEmpty();
        }
    }

    private static Instant databaseNow() throws SQLException {
        try (Connection c = DriverManager.getConnection(PgReplicaPair.url(), "postgres", "");
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint")) {
            rs.next();
            return Instant.EPOCH.plus(rs.getLong(1), ChronoUnit.MICROS);
        }
    }

    private static Instant timelineFirstSeen(String table) throws SQLException {
        try (Connection c = DriverManager.getConnection(PgReplicaPair.url(), "postgres", "");
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT (extract(epoch FROM first_seen) * 1000000)::bigint FROM " + table
                        + "_timelines WHERE timeline = (SELECT " + PgLeaseSql.TIMELINE + ")")) {
            assertThat(rs.next()).as("the new timeline's start is recorded").isTrue();
            return Instant.EPOCH.plus(rs.getLong(1), ChronoUnit.MICROS);
        }
    }
}
