package dev.holdfast.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.SchedulingDelay;
import dev.holdfast.testing.FaultDatabase;
import dev.holdfast.testing.FaultTest;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A stalled server connection under kept-alive leases. One application holds two leases under
 * {@link LeaseService#keepAlive}, with a pool of one connection (HikariCP's default 30 s borrow
 * timeout, pgjdbc's and Connector/J's default: no socket timeout). That connection stalls: on
 * PostgreSQL its backend process is stopped ({@code kill -STOP}, only while idle, so it holds no row
 * lock); on MariaDB a loopback proxy stops forwarding. One renewal then hangs on the socket and the
 * other waits for the pool — both of the guard's renewal paths are stuck. Checked: each worker is
 * told (interrupt, {@code onLost}, {@code isValid()} false) by its lease's last confirmed expiry;
 * another application blocked in {@link LeaseService#acquire} gets each lease within the TTL (plus
 * the time to notice an expiry); after the stall ends (more than a TTL later) the stale holder's
 * fenced write is refused and closing its guard reports the loss. The {@link FaultChecker} finds no
 * stale write accepted, no token repeated, no two live holders.
 */
class LeaseStallFaultTest {

    private static final Duration TTL = Duration.ofMillis(1500);
    private static final List<String> NAMES = List.of("stall-a", "stall-b");
    /** Scheduling slack for "told by the deadline" (timer threads, a loaded 2-core machine). */
    private static final long TOLD_SLACK_MILLIS = 250;
    /** An expired holder is noticed within the safety poll (0.5 s) on PostgreSQL, the backoff (50 ms) elsewhere. */
    private static final long NOTICE_MILLIS = 1000;

    @FaultTest
    void stalledHolderConnection(FaultDatabase db) throws Exception {
        boolean pg = db.kind() == TestDatabase.Kind.POSTGRESQL;
        String table = FaultChecker.installLeases(db);
        FaultChecker checker = new FaultChecker(db, NAMES.toArray(String[]::new));
        ExecutorService executor = Executors.newCachedThreadPool();
        SchedulingDelay delay = SchedulingDelay.watch();
        try (StallingProxy proxy = pg ? null : new StallingProxy(db.host(), db.port())) {
            HikariDataSource holderPool = pg
                    ? db.newPool("holder", 1, Duration.ofSeconds(30))
                    : db.newPoolAt(db.urlVia("127.0.0.1", proxy.port()), "holder", 1, Duration.ofSeconds(30));
            HikariDataSource otherPool = db.newPool("other", 4, Duration.ofSeconds(30));
            long pid = -1;
            if (pg) {
                try (Connection c = holderPool.getConnection()) {
                    pid = db.sessionId(c);
                }
            }
            try (LeaseService holder =
                            LeaseService.builder(holderPool).table(table).build();
                    LeaseService other =
                            LeaseService.builder(otherPool).table(table).build()) {
                KeptAliveWorker.Crew crew = new KeptAliveWorker.Crew(executor, holder, TTL, holderPool, checker, NAMES);

                long stalledAt;
                List<Lease> taken = new ArrayList<>();
                List<Long> waitedMillis = new ArrayList<>();
                boolean stopped = false;
                boolean allToldWhileStalled = false;
                try {
                    if (pg) {
                        stopIdle(db, pid);
                        stopped = true;
                    } else {
                        proxy.stall();
                    }
                    stalledAt = System.nanoTime();
                    List<Future<Lease>> takers = new ArrayList<>();
                    for (String name : NAMES) {
                        takers.add(executor.submit(() -> {
                            Lease lease = other.acquire(name, "other", Duration.ofSeconds(30), Duration.ofSeconds(20));
                            synchronized (waitedMillis) {
                                waitedMillis.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stalledAt));
                            }
                            checker.granted(lease);
                            assertThat(checker.write(otherPool, name, "other", lease.token()))
                                    .isTrue();
                            return lease;
                        }));
                    }
                    for (Future<Lease> f : takers) {
                        taken.add(f.get(30, TimeUnit.SECONDS));
                    }
                    await("the stall lasted more than the TTL")
                            .atMost(Duration.ofSeconds(10))
                            .pollInterval(Duration.ofMillis(10))
                            .until(() ->
                                    System.nanoTime() - stalledAt > TTL.toNanos() + TimeUnit.MILLISECONDS.toNanos(200));
                    // The stall lasts until every worker was told, or long past any deadline.
                    allToldWhileStalled = crew.allToldWithin(Duration.ofSeconds(5));
                } finally {
                    if (stopped) {
                        db.signal(pid, "CONT");
                    }
                    if (proxy != null) {
                        proxy.resume();
                    }
                    crew.faultOver();
                }

                List<KeptAliveWorker.Told> told = crew.told();
                for (Lease lease : taken) {
                    assertThat(checker.ended(lease)).isTrue();
                    other.release(lease);
                }
                FaultChecker.Report report = checker.check();
                long machineDelay =
                        delay.worstMillis(); // this machine's own lateness in this run, added to every bound
                System.out.printf(
                        "[%s] this machine woke a sleeping thread up to %d ms late meanwhile%n", db.id(), machineDelay);
                long worstLateness = KeptAliveWorker.latenessMillis(told).stream()
                        .mapToLong(Long::longValue)
                        .max()
                        .orElseThrow();
                long worstWait =
                        waitedMillis.stream().mapToLong(Long::longValue).max().orElseThrow();
                long staleAccepted = told.stream()
                        .filter(KeptAliveWorker.Told::staleWriteAccepted)
                        .count();
                System.out.printf(
                        "[%s] stall fault: TTL %d ms; workers told %s ms relative to their last confirmed expiry"
                                + " (worst %d ms); other blocked %s ms (worst %d ms); stale holder's fenced writes accepted"
                                + " after resume %d of %d; %s%n",
                        db.id(),
                        TTL.toMillis(),
                        KeptAliveWorker.latenessMillis(told),
                        worstLateness,
                        waitedMillis,
                        worstWait,
                        staleAccepted,
                        told.size(),
                        report);

                assertThat(allToldWhileStalled)
                        .as("every worker was told while its connection was still stalled")
                        .isTrue();
                KeptAliveWorker.assertEachToldOfTheLoss(told);
                assertThat(worstLateness)
                        .as("worst time from the deadline to the worker being told (ms)")
                        .isLessThanOrEqualTo(TOLD_SLACK_MILLIS + machineDelay);
                assertThat(worstWait)
                        .as("longest another application was blocked (ms)")
                        .isLessThanOrEqualTo(TTL.toMillis() + NOTICE_MILLIS + 2 * machineDelay);
                assertThat(staleAccepted).as("stale writes accepted").isZero();
                report.assertNoViolation();
            }
        } finally {
            executor.shutdownNow();
            delay.close();
        }
    }

    /** Stops the backend with SIGSTOP at a moment it is idle (between statements, holding no lock). */
    private static void stopIdle(FaultDatabase db, long pid) throws Exception {
        for (int attempt = 0; attempt < 100; attempt++) {
            db.signal(pid, "STOP");
            String state;
            try {
                state = state(db, pid);
            } catch (SQLException | RuntimeException e) {
                db.signal(pid, "CONT");
                throw e;
            }
            if ("idle".equals(state)) {
                return;
            }
            db.signal(pid, "CONT");
            Thread.sleep(7); // lets the backend move on before it is stopped again
        }
        throw new AssertionError("backend " + pid + " was never idle when stopped");
    }

    private static String state(FaultDatabase db, long pid) throws SQLException {
        try (Connection c = db.admin().getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT state FROM pg_stat_activity WHERE pid = ?")) {
            ps.setInt(1, (int) pid);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }
}
