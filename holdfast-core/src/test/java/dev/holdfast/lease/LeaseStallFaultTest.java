package dev.holdfast.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.testing.FaultDatabase;
import dev.holdfast.testing.FaultTest;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A stalled server connection under kept-alive leases. One application holds two leases under
 * {@link LeaseService#keepAlive}, with a pool of one connection (HikariCP's default 30 s borrow
 * timeout, pgjdbc's and Connector/J's default: no socket timeout). That connection stalls: on
 * PostgreSQL its backend process is stopped ({@code kill -STOP}, only while idle, so it holds no row
 * lock); on MariaDB a loopback proxy stops forwarding. One renewal then hangs on the socket and the
 * other waits for the pool — both of the guard's renewal paths are stuck. Checked: each worker is
 * told (interrupt, {@code onLost}, {@code isValid()} false) by its lease's last confirmed expiry;
 * another application blocked in {@link LeaseService#lock} gets each lease within the TTL (plus
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

    record Told(String name, long token, Instant toldAt, boolean onLostCalled, boolean validAfter,
                Instant lastConfirmedExpiry, boolean staleWriteAccepted, Throwable closeFailure) {
    }

    @FaultTest
    void stalledHolderConnection(FaultDatabase db) throws Exception {
        boolean pg = db.kind() == TestDatabase.Kind.POSTGRESQL;
        String table = FaultChecker.installLeases(db);
        FaultChecker checker = new FaultChecker(db, NAMES.toArray(String[]::new));
        ExecutorService executor = Executors.newCachedThreadPool();
        try (StallingProxy proxy = pg ? null : new StallingProxy(db.host(), db.port())) {
            HikariDataSource holderPool = pg ? db.newPool("holder", 1, Duration.ofSeconds(30))
                    : db.newPoolAt(db.urlVia("127.0.0.1", proxy.port()), "holder", 1, Duration.ofSeconds(30));
            HikariDataSource otherPool = db.newPool("other", 4, Duration.ofSeconds(30));
            long pid = -1;
            if (pg) {
                try (Connection c = holderPool.getConnection()) {
                    pid = db.sessionId(c);
                }
            }
            try (LeaseService holder = LeaseService.builder(holderPool).table(table).build();
                 LeaseService other = LeaseService.builder(otherPool).table(table).build()) {
                CountDownLatch ready = new CountDownLatch(NAMES.size());
                CountDownLatch resumed = new CountDownLatch(1);
                Map<String, Instant> toldWhileStalled = new ConcurrentHashMap<>();
                List<Future<Told>> workers = new ArrayList<>();
                for (String name : NAMES) {
                    workers.add(executor.submit(() -> work(holder, holderPool, checker, name, ready, resumed, toldWhileStalled)));
                }
                assertThat(ready.await(10, TimeUnit.SECONDS)).isTrue();

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
                            Lease lease = other.lock(name, "other", Duration.ofSeconds(30), Duration.ofSeconds(20));
                            synchronized (waitedMillis) {
                                waitedMillis.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stalledAt));
                            }
                            checker.granted(lease);
                            assertThat(checker.write(otherPool, name, "other", lease.token())).isTrue();
                            return lease;
                        }));
                    }
                    for (Future<Lease> f : takers) {
                        taken.add(f.get(30, TimeUnit.SECONDS));
                    }
                    LeaseRestartFaultTest.await("the stall lasted more than the TTL", Duration.ofSeconds(10),
                            () -> System.nanoTime() - stalledAt > TTL.toNanos() + TimeUnit.MILLISECONDS.toNanos(200));
                    // The stall lasts until every worker was told, or long past any deadline.
                    allToldWhileStalled = LeaseRestartFaultTest.awaitQuietly(Duration.ofSeconds(5),
                            () -> toldWhileStalled.size() == NAMES.size());
                } finally {
                    if (stopped) {
                        db.signal(pid, "CONT");
                    }
                    if (proxy != null) {
                        proxy.resume();
                    }
                    resumed.countDown();
                }

                List<Told> told = new ArrayList<>();
                for (Future<Told> f : workers) {
                    told.add(f.get(60, TimeUnit.SECONDS));
                }
                for (Lease lease : taken) {
                    assertThat(checker.ended(lease)).isTrue();
                    other.release(lease);
                }
                FaultChecker.Report report = checker.check();
                long worstLateness = told.stream()
                        .mapToLong(t -> Duration.between(t.lastConfirmedExpiry(), t.toldAt()).toMillis()).max().orElseThrow();
                long worstWait = waitedMillis.stream().mapToLong(Long::longValue).max().orElseThrow();
                long staleAccepted = told.stream().filter(Told::staleWriteAccepted).count();
                System.out.printf("[%s] stall fault: TTL %d ms; workers told %s ms relative to their last confirmed expiry"
                                + " (worst %d ms); other blocked %s ms (worst %d ms); stale holder's fenced writes accepted"
                                + " after resume %d of %d; %s%n",
                        db.id(), TTL.toMillis(),
                        told.stream().map(t -> Duration.between(t.lastConfirmedExpiry(), t.toldAt()).toMillis()).toList(),
                        worstLateness, waitedMillis, worstWait, staleAccepted, told.size(), report);

                assertThat(allToldWhileStalled).as("every worker was told while its connection was still stalled").isTrue();
                for (Told t : told) {
                    assertThat(t.onLostCalled()).as("onLost called for " + t.name()).isTrue();
                    assertThat(t.validAfter()).as("isValid() after the worker was told").isFalse();
                    assertThat(t.closeFailure()).as("closing the lost guard").isInstanceOf(LeaseLostException.class);
                }
                assertThat(worstLateness).as("worst time from the deadline to the worker being told (ms)")
                        .isLessThanOrEqualTo(TOLD_SLACK_MILLIS);
                assertThat(worstWait).as("longest another application was blocked (ms)")
                        .isLessThanOrEqualTo(TTL.toMillis() + NOTICE_MILLIS);
                assertThat(staleAccepted).as("stale writes accepted").isZero();
                assertThat(report.staleAccepted()).as("stale writes accepted").isZero();
                assertThat(report.tokenRepeats()).as("token repeats").isZero();
                assertThat(report.overlaps()).as("overlapping live holders").isZero();
                assertThat(report.lostOrDuplicated()).as("lost or duplicated updates").isZero();
            }
        } finally {
            executor.shutdownNow();
        }
    }

    /** A worker under a kept-alive lease: sleeps until told, then (after the stall) tries a stale write. */
    private static Told work(LeaseService holder, HikariDataSource holderPool, FaultChecker checker, String name,
                             CountDownLatch ready, CountDownLatch resumed, Map<String, Instant> told) throws Exception {
        Lease lease = holder.tryAcquire(name, "holder", TTL).orElseThrow();
        checker.granted(lease);
        CountDownLatch onLost = new CountDownLatch(1);
        LeaseGuard guard = holder.keepAlive(lease, TTL, loss -> onLost.countDown());
        assertThat(checker.write(holderPool, name, "holder", guard.token())).isTrue();
        ready.countDown();
        Instant toldAt;
        try {
            Thread.sleep(TimeUnit.MINUTES.toMillis(2));
            throw new AssertionError("the worker under '" + name + "' was never told that its lease was lost");
        } catch (InterruptedException e) {
            toldAt = Instant.now();
            told.put(name, toldAt);
        }
        boolean validAfter = guard.isValid();
        boolean onLostCalled = onLost.await(5, TimeUnit.SECONDS);
        Instant lastConfirmed = guard.lease().expiresAt();
        checker.lostAt(lease, lastConfirmed);
        resumed.await();
        boolean staleAccepted = checker.write(holderPool, name, "holder", lease.token());
        Throwable closeFailure = catchThrowable(guard::close);
        return new Told(name, lease.token(), toldAt, onLostCalled, validAfter, lastConfirmed, staleAccepted, closeFailure);
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
            Thread.sleep(7);
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
