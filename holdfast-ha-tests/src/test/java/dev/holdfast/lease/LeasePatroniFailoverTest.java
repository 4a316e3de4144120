package dev.holdfast.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.PatroniCluster;
import dev.holdfast.PgReplicaPair;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.lease.internal.PgLeaseSql;
import dev.holdfast.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Leases, fencing and offline locks across the faults of a Patroni-managed pair ({@code scripts/patroni.sh}:
 * one etcd member, two Patroni nodes on 127.0.0.1:5446/5447, DCS TTL 10 s, loop 1 s), with Patroni's
 * {@code synchronous_mode} on or off. One cluster per mode; while 16 workers (each its own pool and
 * {@link LeaseService}, reaching the pair only through the multi-host URL with
 * {@code targetServerType=primary}) fight over two names with fenced writes, the test injects, one after
 * another, each fault once, and waits for the cluster to heal before the next:
 * <ol>
 *   <li>{@code kill -9} of the leader's postmaster (Patroni restarts it and takes a new timeline),</li>
 *   <li>the leader's Patroni stopped (it stops its PostgreSQL and gives up the lead; started again after),</li>
 *   <li>{@code patronictl switchover},</li>
 *   <li>{@code patronictl failover},</li>
 *   <li>the leader stalled (SIGSTOP of its Patroni and PostgreSQL for the DCS TTL and 3 s, then SIGCONT).</li>
 * </ol>
 * Nobody restarts anything on the client side. The fenced resource lives on the matrix's PostgreSQL
 * (5432), outside the failing pair, as in {@link LeaseFailoverTest}; so does its checker.
 *
 * <p><b>Lost grants.</b> Each fault makes a new timeline (its number is in the token's high bits). A grant
 * made on timeline T after a grant of a later timeline began (database time) was made by a deposed primary
 * after the promotion: the new timeline forked before it, so it is not in the surviving history (the stall
 * can cause it: when the old leader resumes, it serves for a moment before its Patroni demotes it). Those
 * grants are counted as lost, and what they cause (overlaps, grants out of token order) is reported apart.
 * With {@code synchronous_mode} a deposed primary cannot commit (its synchronous standby follows someone
 * else), so there must be none. For every other grant the checker asserts: stale writes accepted 0, token
 * order violations 0, two live holders 0. The asynchronous run uses {@link LeaseService.Builder#failoverGrace}
 * as the README advises for asynchronous replication.
 *
 * <p><b>Offline locks.</b> One more thread takes and releases offline locks with a {@code DURABLE}
 * {@link dev.holdfast.pessimistic.offline.JdbcLockManager} through the whole run; afterwards every operation
 * that was acknowledged must be on the surviving primary (with {@code synchronous_mode}: asserted).
 */
class LeasePatroniFailoverTest {

    private static final int WORKERS = 16;
    private static final Duration TTL = Duration.ofMillis(400);
    private static final String[] NAMES = {"alpha", "beta"};
    private static final List<String> FAULTS =
            List.of("kill-postmaster", "stop-patroni", "switchover", "failover", "stall");
    private static final long WARM_UP_MILLIS = 3_000;
    private static final long AFTER_FAULT_MILLIS = 2_000;

    @AfterAll
    static void removeCluster() {
        if (PatroniCluster.scriptPresent()) {
            PatroniCluster.script("down");
        }
    }

    /**
     * What one fault did, as the workers saw it: the longest time without a grant from the fault's start to
     * the first grant after the cluster healed, when it ended (after the start), and the timeline then.
     */
    record FaultFigures(String fault, long healedMillis, long noGrantMillis, long grantsAgainMillis, long timeline) {}

    private static FaultFigures outage(String fault, long start, long healed, Queue<LeaseFailoverTest.Grant> grants) {
        List<LeaseFailoverTest.Grant> after = grants.stream()
                .filter(g -> g.seenNanos() > start)
                .sorted(Comparator.comparingLong(LeaseFailoverTest.Grant::seenNanos))
                .toList();
        long firstAfterHeal = after.stream()
                .mapToLong(LeaseFailoverTest.Grant::seenNanos)
                .filter(t -> t > healed)
                .min()
                .orElseThrow();
        long previous = start;
        long gap = 0;
        long gapEnd = start;
        for (LeaseFailoverTest.Grant g : after) {
            if (g.seenNanos() > firstAfterHeal) {
                break;
            }
            if (g.seenNanos() - previous > gap) {
                gap = g.seenNanos() - previous;
                gapEnd = g.seenNanos();
            }
            previous = g.seenNanos();
        }
        long timeline = after.stream()
                .filter(g -> g.seenNanos() <= firstAfterHeal)
                .mapToLong(g -> timeline(g.token()))
                .max()
                .orElse(0);
        return new FaultFigures(fault, ms(healed - start), ms(gap), ms(gapEnd - start), timeline);
    }

    @ParameterizedTest(name = "synchronous_mode {0}")
    @ValueSource(strings = {"sync", "async"})
    void fencedStressAcrossPatroniFaults(String mode) throws Exception {
        PatroniCluster.script("up", mode);
        createAppRole();
        String table = "lease_patroni";
        String resource =
                "patroni_res_" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 24, 36);
        List<HikariDataSource> pools = new ArrayList<>();
        List<LeaseService> services = new ArrayList<>();
        try (HikariDataSource admin = LeaseFailoverTest.pool(PatroniCluster.url(), 2, "patroni-admin");
                HikariDataSource resources = TestDatabase.Kind.POSTGRESQL.newPool("patroni-resource", WORKERS + 2)) {
            new SchemaInstaller(admin).install(HoldfastTable.LEASES, table);
            new SchemaInstaller(admin).install(HoldfastTable.OFFLINE_LOCKS, "locks_patroni");
            try (Connection c = resources.getConnection();
                    Statement s = c.createStatement()) {
                s.execute(FencedWork.createTableSql(resource));
                for (String name : NAMES) {
                    s.execute("INSERT INTO " + resource + " (name, val) VALUES ('" + name + "', 0)");
                }
            }
            try {
                run(mode, table, resource, resources, pools, services);
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
            String mode,
            String table,
            String resource,
            HikariDataSource resources,
            List<HikariDataSource> pools,
            List<LeaseService> services)
            throws Exception {
        boolean sync = mode.equals("sync");
        FencedWork work = new FencedWork(resource, new FencedWork.Pause(50, TTL, 50, 100));
        for (int i = 0; i < WORKERS; i++) {
            HikariDataSource pool = LeaseFailoverTest.pool(PatroniCluster.url(), 3, "patroni-worker-" + i);
            pools.add(pool);
            LeaseService.Builder builder = LeaseService.builder(pool).table(table);
            services.add((sync ? builder : builder.failoverGrace(TTL)).build());
        }
        FailoverWorkers workers = new FailoverWorkers(services, NAMES, TTL, work, resources, 1);
        Queue<LeaseFailoverTest.Grant> grants = workers.grants;
        HikariDataSource offlinePool = LeaseFailoverTest.pool(PatroniCluster.url(), 2, "patroni-offline");
        pools.add(offlinePool);
        OfflineWork offline = new OfflineWork(offlinePool, "locks_patroni");
        workers.submit(() -> offline.run(workers.stopping()));

        Thread.sleep(WARM_UP_MILLIS); // the workers run a while before the first fault
        List<FaultFigures> figures = new ArrayList<>();
        for (String fault : FAULTS) {
            long start = System.nanoTime();
            PatroniCluster.script(fault);
            if (fault.equals("stop-patroni")) {
                PatroniCluster.script("start-patroni"); // the stopped node rejoins as a replica
            }
            PatroniCluster.script("wait-healthy", "120");
            long healed = System.nanoTime();
            // the workers get grants again without any restart on their side
            assertThat(LeaseFixture.holdsWithin(
                            Duration.ofSeconds(60),
                            Duration.ofMillis(100),
                            () -> grants.stream().anyMatch(g -> g.seenNanos() > healed)))
                    .as("a grant after " + fault + " healed (so far: " + figures + ")")
                    .isTrue();
            figures.add(outage(fault, start, healed, grants));
            Thread.sleep(AFTER_FAULT_MILLIS);
        }
        workers.stop();

        List<LeaseFailoverTest.Grant> all = new ArrayList<>(grants);
        List<LeaseFailoverTest.Grant> lost = deposedGrants(all);
        List<LeaseFailoverTest.Grant> kept =
                all.stream().filter(g -> !lost.contains(g)).toList();
        FailoverWorkers.Writes writes = workers.checkWrites(resources, resource);
        long staleAccepted = writes.staleAccepted();
        long lostOrDuplicated = writes.lostOrDuplicated();
        long disorderOfKept = LeaseFailoverTest.tokenDisorder(kept, NAMES);
        long disorderOfAll = LeaseFailoverTest.tokenDisorder(all, NAMES);
        List<LeaseFailoverTest.Grant[]> overlapsOfKept = workers.overlaps.stream()
                .filter(p -> !lost.contains(p[0]) && !lost.contains(p[1]))
                .toList();
        OfflineWork.Check offlineCheck = offline.check();

        StringBuilder perFault = new StringBuilder();
        for (FaultFigures f : figures) {
            perFault.append(String.format(
                    "%n  %-15s cluster healthy again after %5d ms; no grant for %5d ms, grants"
                            + " again %5d ms after the fault (PostgreSQL timeline %d)",
                    f.fault(), f.healedMillis(), f.noGrantMillis(), f.grantsAgainMillis(), f.timeline() + 1));
        }
        System.out.printf(
                "[patroni %s] %d grants, %d timelines;%s%n  typed errors seen by workers %s; %d releases found"
                        + " their lease gone; %d pauses > TTL; %d accepted writes, %d refused by the fence;"
                        + " lost grants (made by a deposed primary) %d, overlaps they caused %d, token order breaks they"
                        + " caused %d; stale writes accepted %d; lost/duplicated updates %d; token order violations %d;"
                        + " two live holders %d; offline DURABLE: %s%n",
                mode,
                all.size(),
                all.stream().mapToLong(g -> timeline(g.token())).distinct().count(),
                perFault,
                workers.typedErrors(),
                workers.lostReleases.get(),
                workers.pauses.get(),
                workers.accepted.size(),
                workers.refused.get(),
                lost.size(),
                workers.overlaps.size() - overlapsOfKept.size(),
                disorderOfAll - disorderOfKept,
                staleAccepted,
                lostOrDuplicated,
                disorderOfKept,
                overlapsOfKept.size(),
                offlineCheck);

        assertThat(workers.unexpected).as("unexpected failures").isEmpty();
        assertThat(figures).hasSize(FAULTS.size());
        assertThat(workers.pauses.get()).as("sections paused past the TTL").isPositive();
        assertThat(staleAccepted).as("stale writes accepted").isZero();
        assertThat(lostOrDuplicated).as("lost or duplicated resource updates").isZero();
        assertThat(disorderOfKept).as("token order violations").isZero();
        assertThat(overlapsOfKept).as("two live holders").isEmpty();
        assertThat(offlineCheck.acknowledged())
                .as("acknowledged offline lock operations")
                .isPositive();
        if (sync) {
            assertThat(lost).as("grants lost with synchronous_mode").isEmpty();
            assertThat(offlineCheck.lost())
                    .as("acknowledged DURABLE offline operations lost with synchronous_mode")
                    .isEmpty();
        }
    }

    /**
     * Grants made on a timeline after a grant of a later timeline began, by database time: a deposed
     * primary made them after the promotion, so the surviving history does not have them.
     */
    static List<LeaseFailoverTest.Grant> deposedGrants(List<LeaseFailoverTest.Grant> all) {
        Map<Long, java.time.Instant> firstOfTimeline = new java.util.HashMap<>();
        for (LeaseFailoverTest.Grant g : all) {
            firstOfTimeline.merge(timeline(g.token()), g.acquiredAt(), (a, b) -> a.isBefore(b) ? a : b);
        }
        return all.stream()
                .filter(g -> firstOfTimeline.entrySet().stream()
                        .anyMatch(e ->
                                e.getKey() > timeline(g.token()) && e.getValue().isBefore(g.acquiredAt())))
                .toList();
    }

    private static long maxTimeline(Queue<LeaseFailoverTest.Grant> grants) {
        return grants.stream().mapToLong(g -> timeline(g.token())).max().orElse(0);
    }

    private static long timeline(long token) {
        return token >>> PgLeaseSql.TIMELINE_SHIFT;
    }

    /** The workers' role on the fresh cluster: it may create tables, and is no superuser. */
    private static void createAppRole() throws SQLException {
        try (Connection c = DriverManager.getConnection(
                        PgReplicaPair.withoutHostCache(PatroniCluster.url()), "postgres", "postgres");
                Statement s = c.createStatement()) {
            s.execute("CREATE ROLE " + LeaseFailoverTest.APP_ROLE + " LOGIN");
            s.execute("GRANT CREATE, USAGE ON SCHEMA public TO " + LeaseFailoverTest.APP_ROLE);
        }
    }

    private static long ms(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }
}
