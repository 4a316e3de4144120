package dev.holdfast.lease;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.PgReplicaPair;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.lease.internal.PgLeaseSql;
import dev.holdfast.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Leases and fencing across a real PostgreSQL failover. {@code scripts/pg-replica.sh up sync|async}
 * makes a fresh primary (127.0.0.1:5434) and hot standby (5435); the 16 workers reach the pair only
 * through the pgjdbc multi-host URL ({@code HOLDFAST_REPLICA_URL}, default
 * {@code jdbc:postgresql://127.0.0.1:5434,127.0.0.1:5435/test?targetServerType=primary}), each with a
 * pool and a {@link LeaseService} of its own, as separate servers would. They fight over two names
 * (TTL 400 ms; half {@code tryAcquire}, half the blocking {@code lock}); about 2% of critical sections
 * pause past the TTL. In the middle the test stops the primary with {@code stop -m immediate} and
 * promotes the standby; nobody restarts anything on the client side.
 *
 * <p><b>Where the protected data lives.</b> The fenced resource table is on the test matrix's
 * PostgreSQL server (5432), not on the failing-over pair: it stands for the storage a lease protects,
 * and it must not lose writes itself, or the checker could not tell a stale write from a lost one.
 * Had it lived on the asynchronously replicated pair, the failover could roll back accepted
 * resource writes together with the grants; no token can prevent that, only synchronous replication
 * of the resource can. Every claim and write is {@link FencedUpdate} with the worker's token.
 *
 * <p><b>The checker</b> uses only what the workers saw (each grant's token and database-time
 * window, each accepted write) and what the servers hold afterwards. (1) Stale writes accepted: the
 * accepted writes of a name, in value order, never go down in token, and are 1..N exactly once;
 * (2) token order: the grants of a name, in database-time order across the failover, strictly
 * increase in token; (3) no two live holders: no grant starts while an earlier-token grant, not yet
 * released by its worker, is live by database time. A grant the old primary made but had not yet
 * sent to an asynchronous standby is lost: the new primary never knew it, so it can hand the name
 * to someone else while that holder's window is still open. The test finds those grants (old
 * timeline, token above what the standby had replayed when the primary stopped, read before the
 * promotion) and reports overlaps they cause separately; (3) is asserted for every other grant, and
 * in synchronous mode there must be no lost grant at all. For a lost grant the token is what keeps
 * the data safe: every grant of the new timeline has a greater token, so (1) covers its writes.
 *
 * <p>To make the asynchronous loss certain rather than a matter of luck, the asynchronous run cuts
 * the standby's stream ({@code pg-replica.sh cut-standby}) one second before it stops the primary:
 * every grant of that second is lost. With a plain per-row counter (the token before timelines)
 * the new primary would hand those very tokens out again: (2) would count duplicates, and a lost
 * grant's holder and a new holder with equal tokens would both pass the fence.
 */
@ExtendWith(PgReplicaPair.Exclusive.class)
class LeaseFailoverTest {

    private static final int WORKERS = 16;
    private static final Duration TTL = Duration.ofMillis(400);
    private static final String[] NAMES = {"alpha", "beta"};
    private static final long RUN_BEFORE_MILLIS = 4_000;
    private static final long RUN_AFTER_MILLIS = 5_000;
    private static final long CUT_MILLIS = 1_000;
    /** The workers' role: no superuser, no monitoring role; it owns the lease table. */
    static final String APP_ROLE = "holdfast_app";

    private static final long NEW_TIMELINE = 1L << PgLeaseSql.TIMELINE_SHIFT;

    record Grant(String name, String owner, long token, Instant acquiredAt, Instant expiresAt, long seenNanos)
            implements FencedWork.Seen {}

    record Write(String name, long token, long value) {}

    static HikariDataSource pool(String url, int size, String name) {
        return pool(url, size, name, 1_000);
    }

    /**
     * A pool for a test's setup on a pair just brought up: it waits up to 30 s for the primary to take a connection
     * (on a loaded machine it took more than the workers' 1 s right after {@code pg-replica.sh up}).
     */
    static HikariDataSource adminPool(String name) {
        return pool(PgReplicaPair.url(), 2, name, 30_000);
    }

    private static HikariDataSource pool(String url, int size, String name, long connectionTimeoutMillis) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setUsername(APP_ROLE);
        config.setPassword("");
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(0);
        config.setConnectionTimeout(connectionTimeoutMillis);
        config.setValidationTimeout(500);
        config.setPoolName(name);
        config.setInitializationFailTimeout(-1);
        return new HikariDataSource(config);
    }

    @AfterAll
    static void removePair() {
        if (PgReplicaPair.scriptPresent()) {
            PgReplicaPair.script("down");
        }
    }

    @ParameterizedTest(name = "{0} replication")
    @ValueSource(strings = {"sync", "async"})
    void fencedStressAcrossFailover(String mode) throws Exception {
        PgReplicaPair.script("up", mode);
        createAppRole();
        TestDatabase.Kind store = TestDatabase.Kind.POSTGRESQL;
        String table = "lease_failover";
        String resource =
                "failover_res_" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 24, 36);
        List<HikariDataSource> pools = new ArrayList<>();
        List<LeaseService> services = new ArrayList<>();
        try (HikariDataSource admin = adminPool("failover-admin");
                HikariDataSource resources = store.newPool("failover-resource", WORKERS + 2)) {
            new SchemaInstaller(admin).install(HoldfastTable.LEASES, table);
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
        FencedWork work = new FencedWork(resource, new FencedWork.Pause(50, TTL, 50, 100));
        for (int i = 0; i < WORKERS; i++) {
            HikariDataSource pool = pool(PgReplicaPair.url(), 3, "failover-worker-" + i);
            pools.add(pool);
            services.add(LeaseService.builder(pool).table(table).build());
        }
        FailoverWorkers workers = new FailoverWorkers(services, NAMES, TTL, work, resources, 0);

        Thread.sleep(RUN_BEFORE_MILLIS); // the workers run a while on the old primary
        if (mode.equals("async")) {
            // Make the asynchronous loss certain: the standby receives nothing of the last second.
            PgReplicaPair.script("cut-standby");
            Thread.sleep(CUT_MILLIS); // the primary commits a second of grants the standby never gets
        }
        long stopNanos = System.nanoTime();
        PgReplicaPair.script("stop-primary");
        long stoppedNanos = System.nanoTime();
        Map<String, Long> survived = replayedTokens(table);
        PgReplicaPair.script("promote");
        long promotedNanos = System.nanoTime();
        Thread.sleep(RUN_AFTER_MILLIS); // the workers run a while on the new primary
        // a listener re-subscribes after its reconnect backoff (up to 2 s) and a connection timeout:
        // wait for them, with room for a slow machine, rather than count them once
        AtomicLong listening = new AtomicLong();
        LeaseFixture.holdsWithin(Duration.ofSeconds(20), Duration.ofMillis(200), () -> {
            listening.set(listenersOnPrimary(table));
            return listening.get() >= WORKERS / 2;
        });
        long listeners = listening.get();
        workers.stop();

        // Lost grants: of the old timeline, above what the standby had when the primary stopped.
        List<Grant> all = new ArrayList<>(workers.grants);
        List<Grant> lost = all.stream()
                .filter(g -> g.token() < NEW_TIMELINE && g.token() > survived.getOrDefault(g.name(), 0L))
                .toList();
        long before = all.stream().filter(g -> g.token() < NEW_TIMELINE).count();
        long after = all.size() - before;
        long firstNewNanos = all.stream()
                .filter(g -> g.token() >= NEW_TIMELINE)
                .mapToLong(Grant::seenNanos)
                .min()
                .orElse(-1);

        FailoverWorkers.Writes writes = workers.checkWrites(resources, resource);
        long staleAccepted = writes.staleAccepted();
        long lostOrDuplicated = writes.lostOrDuplicated();
        long tokenDisorder = tokenDisorder(all, NAMES);
        List<Grant[]> overlapsOfKept =
                workers.overlaps.stream().filter(p -> !lost.contains(p[0])).toList();
        long overlapsOfLost = workers.overlaps.size() - overlapsOfKept.size();

        Map<String, Long> perName = new HashMap<>();
        all.forEach(g -> perName.merge(g.name(), 1L, Long::sum));
        System.out.printf(
                "[failover %s] grants %d before / %d after the failover (%s); primary stop took %d ms,"
                        + " promotion %d ms; first grant on the new primary %d ms after the stop; %d typed errors"
                        + " (DatabaseException) seen by workers, %d releases found their lease gone; %d pauses > TTL;"
                        + " %d accepted writes, %d refused by the fence; lost grants (async loss) %d, overlaps they caused %d;"
                        + " stale writes accepted %d; lost/duplicated updates %d; token order violations %d;"
                        + " two live holders %d; standby had tokens %s; %d LISTEN sessions on the new primary%n",
                mode,
                before,
                after,
                perName,
                ms(stoppedNanos - stopNanos),
                ms(promotedNanos - stoppedNanos),
                firstNewNanos < 0 ? -1 : ms(firstNewNanos - stopNanos),
                workers.typedErrorCount(),
                workers.lostReleases.get(),
                workers.pauses.get(),
                workers.accepted.size(),
                workers.refused.get(),
                lost.size(),
                overlapsOfLost,
                staleAccepted,
                lostOrDuplicated,
                tokenDisorder,
                overlapsOfKept.size(),
                survived,
                listeners);

        assertThat(workers.unexpected).as("unexpected failures").isEmpty();
        assertThat(before).as("grants before the failover").isPositive();
        assertThat(after)
                .as("grants on the new primary, without restarting anything")
                .isPositive();
        assertThat(workers.pauses.get()).as("sections paused past the TTL").isPositive();
        assertThat(listeners)
                .as("waiters' LISTEN connections re-subscribed on the new primary")
                .isEqualTo(WORKERS / 2);
        assertThat(staleAccepted).as("stale writes accepted").isZero();
        assertThat(lostOrDuplicated).as("lost or duplicated resource updates").isZero();
        assertThat(tokenDisorder).as("token order violations").isZero();
        assertThat(overlapsOfKept)
                .as("two live holders (grants the new primary knew of)")
                .isEmpty();
        if (mode.equals("sync")) {
            assertThat(lost).as("grants lost with synchronous replication").isEmpty();
        } else {
            assertThat(lost)
                    .as("grants lost with the cut asynchronous stream (the case under test)")
                    .isNotEmpty();
        }
        // every post-failover grant outranks every grant made before it
        long maxOld = all.stream()
                .filter(g -> g.token() < NEW_TIMELINE)
                .mapToLong(Grant::token)
                .max()
                .orElse(0);
        assertThat(all.stream()
                        .filter(g -> g.token() >= NEW_TIMELINE)
                        .mapToLong(Grant::token)
                        .min()
                        .orElse(Long.MAX_VALUE))
                .isGreaterThan(maxOld);
    }

    /** The workers' role on a fresh pair: it may create the lease table, and is no superuser. */
    static void createAppRole() throws SQLException {
        try (Connection c = DriverManager.getConnection(
                        PgReplicaPair.withoutHostCache(PgReplicaPair.url()), "postgres", "");
                Statement s = c.createStatement()) {
            s.execute("CREATE ROLE " + APP_ROLE + " LOGIN");
            s.execute("GRANT CREATE, USAGE ON SCHEMA public TO " + APP_ROLE);
        }
    }

    /** Token order: a name's grants, in database-time order across the failover, must strictly increase in token. */
    static long tokenDisorder(List<Grant> all, String[] names) {
        long disorder = 0;
        for (String name : names) {
            List<Grant> inTime = all.stream()
                    .filter(g -> g.name().equals(name))
                    .sorted(Comparator.comparing(Grant::acquiredAt).thenComparingLong(Grant::token))
                    .toList();
            for (int i = 1; i < inTime.size(); i++) {
                if (inTime.get(i).token() <= inTime.get(i - 1).token()) {
                    disorder++;
                }
            }
        }
        return disorder;
    }

    /** Sessions on the (new) primary that listen for this table's wake-ups: one per service that waited. */
    private static long listenersOnPrimary(String table) throws SQLException {
        try (Connection c = DriverManager.getConnection(
                        PgReplicaPair.withoutHostCache(PgReplicaPair.url()), "postgres", "");
                PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pg_stat_activity"
                        + " WHERE state = 'idle' AND query = 'LISTEN ' || "
                        + PgLeaseSql.listenerChannelSql(PgLeaseSql.stemSql(table), "pid"))) {
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** The tokens the standby holds once it has replayed all it received from the stopped primary. */
    static Map<String, Long> replayedTokens(String table) throws Exception {
        try (Connection c = DriverManager.getConnection(PgReplicaPair.standbyUrl(), "postgres", "");
                Statement s = c.createStatement()) {
            LeaseFixture.holdsWithin(Duration.ofSeconds(10), Duration.ofMillis(10), () -> {
                try (ResultSet rs = s.executeQuery("SELECT pg_last_wal_replay_lsn() >= pg_last_wal_receive_lsn()")) {
                    rs.next();
                    return rs.getBoolean(1);
                }
            });
            Map<String, Long> tokens = new HashMap<>();
            try (ResultSet rs = s.executeQuery("SELECT name, token FROM " + table)) {
                while (rs.next()) {
                    tokens.put(rs.getString(1), rs.getLong(2));
                }
            }
            return tokens;
        }
    }

    private static long ms(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }
}
