package dev.holdfast.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.DatabaseException;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.jdbc.dialect.SqlErrorKind;
import dev.holdfast.lease.internal.PgLeaseSql;
import dev.holdfast.testing.FaultDatabase;
import dev.holdfast.testing.FaultTest;
import dev.holdfast.testing.TestDatabase;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * Real server restarts (the dedicated fault servers, {@code scripts/fault-servers.sh restart}) while
 * one application — one {@link LeaseService}, one pool, never rebuilt — holds a kept-alive lease,
 * has blocking waiters in {@link LeaseService#acquire}, has an acquire blocked inside the database, and
 * has two threads spinning on {@link LeaseService#tryAcquire} with fenced writes. Two restarts per
 * database. After each: the in-flight acquire failed with a {@link DatabaseException} classified
 * {@link SqlErrorKind#CONNECTION_LOST} and granted nothing; every library error was so classified;
 * the keep-alive renewed again and never lost its lease; on PostgreSQL the LISTEN connection is
 * back; the holder's release hands the lease to the waiters without polling (the safety poll is set
 * to 30 s, so only a wake-up is fast); the spinners get grants again. The {@link FaultChecker} finds
 * no stale write accepted, no token repeated, no two live holders.
 */
class LeaseRestartFaultTest {

    /** Outlives a restart (2 to 8 s here, on a loaded machine), so the kept-alive lease must survive it. */
    private static final Duration HOLD_TTL = Duration.ofSeconds(20);

    private static final Duration SHORT_TTL = Duration.ofSeconds(1);
    private static final Duration WAIT = Duration.ofSeconds(40);
    private static final int ROUNDS = 2;
    private static final int WAITERS = 2;

    @FaultTest
    void restartsWhileLeasesAreHeldAcquiredAndAwaited(FaultDatabase db) throws Exception {
        String table = FaultChecker.installLeases(db);
        List<String> names = new ArrayList<>(List.of("spin"));
        for (int r = 1; r <= ROUNDS; r++) {
            names.add("job-" + r);
            names.add("blocked-" + r);
        }
        FaultChecker checker = new FaultChecker(db, names.toArray(String[]::new));
        HikariDataSource pool = db.newPool("app", 12, Duration.ofSeconds(30));
        Borrows app = new Borrows(pool);
        Queue<DatabaseException> errors = new ConcurrentLinkedQueue<>();
        AtomicLong driverErrors = new AtomicLong();
        AtomicLong expiredReleases = new AtomicLong();
        List<Long> restartMillis = new ArrayList<>();
        List<Long> handOffMillis = new ArrayList<>();
        ExecutorService executor = Executors.newCachedThreadPool();
        AtomicBoolean stopSpinning = new AtomicBoolean();
        Map<String, AtomicInteger> spinGrants = new ConcurrentHashMap<>();
        try (LeaseService leases = LeaseService.builder(app)
                .table(table)
                .tune(t -> t.safetyPoll(Duration.ofSeconds(30)))
                .build()) {
            List<Future<?>> spinners = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                String owner = "spin-" + i;
                spinGrants.put(owner, new AtomicInteger());
                spinners.add(executor.submit(() -> {
                    while (!stopSpinning.get()) {
                        try {
                            Optional<Lease> granted = leases.tryAcquire("spin", owner, SHORT_TTL);
                            if (granted.isPresent()) {
                                Lease lease = granted.get();
                                checker.granted(lease);
                                spinGrants.get(owner).incrementAndGet();
                                try {
                                    checker.write(app, "spin", owner, lease.token());
                                } catch (SQLException e) {
                                    driverErrors.incrementAndGet();
                                }
                                if (checker.ended(lease)) {
                                    try {
                                        leases.release(lease);
                                    } catch (LeaseExpiredException e) {
                                        expiredReleases.incrementAndGet();
                                    }
                                }
                            }
                        } catch (DatabaseException e) {
                            errors.add(e);
                        }
                        Thread.sleep(5); // a spinner's pace between attempts
                    }
                    return null;
                }));
            }

            for (int round = 1; round <= ROUNDS; round++) {
                restartMillis.add(round(db, leases, app, checker, executor, errors, handOffMillis, table, round));
            }

            Map<String, Integer> before = new TreeMap<>();
            spinGrants.forEach((owner, n) -> before.put(owner, n.get()));
            await("each spinner is granted the lease again after the last restart")
                    .atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(10))
                    .until(() -> spinGrants.entrySet().stream()
                            .allMatch(e -> e.getValue().get() >= before.get(e.getKey()) + 3));
            stopSpinning.set(true);
            for (Future<?> f : spinners) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            stopSpinning.set(true);
            executor.shutdownNow();
        }

        Map<SqlErrorKind, Long> kinds = new TreeMap<>();
        for (DatabaseException e : errors) {
            Dialect dialect = db.kind() == TestDatabase.Kind.POSTGRESQL ? Dialect.POSTGRESQL : Dialect.MARIADB;
            kinds.merge(dialect.classify(e), 1L, Long::sum);
        }
        FaultChecker.Report report = checker.check();
        System.out.printf(
                "[%s] restart faults: restarts survived %d (took %s ms); library errors during restarts %s;"
                        + " driver errors on fenced writes %d; releases found expired %d; hand-offs after restart %s ms;"
                        + " spinner grants %s; %s%n",
                db.id(),
                restartMillis.size(),
                restartMillis,
                kinds,
                driverErrors.get(),
                expiredReleases.get(),
                handOffMillis,
                spinGrants,
                report);
        assertThat(kinds.keySet())
                .as("every library error during a restart is a lost connection")
                .allMatch(k -> k == SqlErrorKind.CONNECTION_LOST);
        report.assertNoViolation();
        assertThat(restartMillis).hasSize(ROUNDS);
    }

    /** One restart with a holder, waiters and an in-flight acquire on {@code job-<round>}; returns its duration. */
    private static long round(
            FaultDatabase db,
            LeaseService leases,
            Borrows app,
            FaultChecker checker,
            ExecutorService executor,
            Queue<DatabaseException> errors,
            List<Long> handOffMillis,
            String table,
            int round)
            throws Exception {
        String job = "job-" + round;
        String blocked = "blocked-" + round;
        Lease first = leases.tryAcquire(blocked, "setup", SHORT_TTL).orElseThrow();
        checker.granted(first);
        assertThat(checker.ended(first)).isTrue();
        leases.release(first);

        // The holder: kept alive across the restart, writes before and after it.
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        AtomicReference<LeaseGuard> guardRef = new AtomicReference<>();
        AtomicReference<LeaseLostException> lost = new AtomicReference<>();
        AtomicLong releasedAt = new AtomicLong();
        Future<Long> holder = executor.submit(() -> {
            Lease lease = leases.tryAcquire(job, "holder", HOLD_TTL).orElseThrow();
            checker.granted(lease);
            try (LeaseGuard guard = leases.keepAlive(lease, HOLD_TTL, lost::set)) {
                guardRef.set(guard);
                assertThat(checker.write(app, job, "holder", guard.token())).isTrue();
                holding.countDown();
                finish.await();
                checker.renewed(guard.lease());
                assertThat(writeRetrying(checker, app, job, "holder", guard.token()))
                        .isTrue();
                assertThat(checker.ended(guard.lease())).isTrue();
            }
            releasedAt.set(System.nanoTime());
            return lease.token();
        });
        assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();

        // Blocking waiters, each retrying lock() after a typed error, as an application would.
        List<Future<Long>> waiters = new ArrayList<>();
        Map<String, Thread> waiterThreads = new ConcurrentHashMap<>();
        for (int i = 0; i < WAITERS; i++) {
            String owner = "waiter-" + round + "-" + i;
            waiters.add(executor.submit(() -> {
                waiterThreads.put(owner, Thread.currentThread());
                return waitAndWork(leases, app, checker, errors, job, owner);
            }));
        }
        if (db.kind() == TestDatabase.Kind.POSTGRESQL) {
            // Queue entries carry a per-call waiter id, not the owner: every waiter has one.
            await("every waiter queued")
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(10))
                    .until(() -> count(db, "SELECT COUNT(*) FROM " + table + "_queue WHERE name = ?", job) == WAITERS);
        }
        for (int i = 0; i < WAITERS; i++) {
            String owner = "waiter-" + round + "-" + i;
            if (db.kind() != TestDatabase.Kind.POSTGRESQL) {
                // Polling: it sleeps between attempts only after an attempt was refused.
                await(owner + " polling")
                        .atMost(Duration.ofSeconds(30))
                        .pollInterval(Duration.ofMillis(10))
                        .until(() -> backingOff(waiterThreads.get(owner)));
            }
        }

        // An acquire blocked inside the database, on the row lock of another transaction.
        Future<Optional<Lease>> inFlight;
        String before;
        try (Connection blocker = db.admin().getConnection()) {
            blocker.setAutoCommit(false);
            try (PreparedStatement ps =
                    blocker.prepareStatement("SELECT token FROM " + table + " WHERE name = ? FOR UPDATE")) {
                ps.setString(1, blocked);
                ps.executeQuery().close();
            }
            before = leases.find(blocked).orElseThrow().toString();
            inFlight = executor.submit(() -> leases.tryAcquire(blocked, "acquirer", SHORT_TTL));
            awaitBlocked(db, table);

            long restart = db.restart().toMillis();

            Optional<Lease> completed = null;
            Throwable failure = catchThrowable(() -> inFlight.get(30, TimeUnit.SECONDS));
            if (failure == null) {
                completed = inFlight.get();
            } else {
                assertThat(failure).as("the acquire in flight").isInstanceOf(ExecutionException.class);
                assertThat(failure.getCause())
                        .isInstanceOf(DatabaseException.class)
                        .hasMessageContaining("lease '" + blocked + "' for 'acquirer'");
                assertThat(leases.dialect().classify(failure.getCause())).isEqualTo(SqlErrorKind.CONNECTION_LOST);
            }
            try {
                blocker.rollback();
            } catch (SQLException expected) {
                // its server went away
            }

            if (completed == null) {
                // The connection was lost, so the caller cannot know the outcome. Either nothing was
                // granted, or the acquire committed just before its own connection ended (the blocker's
                // end freed the row first; seen on MariaDB): then the grant is the acquirer's, with the
                // next token, and runs out by its TTL, as nobody was told of it.
                Lease after = leases.find(blocked).orElseThrow();
                if (!after.toString().equals(before)) {
                    assertThat(after.owner()).as("an in-doubt grant").isEqualTo("acquirer");
                    assertThat(after.token()).isEqualTo(first.token() + 1);
                    assertThat(Duration.between(after.acquiredAt(), after.expiresAt()))
                            .isEqualTo(SHORT_TTL);
                }
            } else {
                // A shutdown ends every backend at once: rarely the blocker's end lets the blocked acquire
                // commit before its own end comes. Then the caller was told of a grant, and that grant is
                // what the database holds after the restart, with the next token: durable, never repeated.
                Lease granted = completed.orElseThrow(() -> new AssertionError("a free lease was refused"));
                assertThat(granted.token()).isEqualTo(first.token() + 1);
                assertThat(leases.find(blocked)).contains(granted);
            }
            if (db.kind() == TestDatabase.Kind.POSTGRESQL) {
                String listening = "'LISTEN ' || " + PgLeaseSql.listenerChannelSql(PgLeaseSql.stemSql(table), "pid");
                await("the listener is back")
                        .atMost(Duration.ofSeconds(20))
                        .pollInterval(Duration.ofMillis(10))
                        .until(() -> count(
                                        db,
                                        "SELECT COUNT(*) FROM pg_stat_activity WHERE query = " + listening
                                                + " AND state = 'idle'")
                                == 1);
            }
            Instant restarted = checker.dbNow();
            await("the keep-alive renewed after the restart")
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(10))
                    .until(() -> !guardRef.get().lease().expiresAt().isBefore(restarted.plus(HOLD_TTL)));
            assertThat(lost.get())
                    .as("the kept-alive lease survived the restart")
                    .isNull();
            assertThat(guardRef.get().isValid()).isTrue();

            // A waiter that starts after the restart queues behind the others.
            String late = "waiter-" + round + "-late";
            waiters.add(executor.submit(() -> waitAndWork(leases, app, checker, errors, job, late)));
            if (db.kind() == TestDatabase.Kind.POSTGRESQL) {
                await(late + " queued")
                        .atMost(Duration.ofSeconds(30))
                        .pollInterval(Duration.ofMillis(10))
                        .until(() -> count(db, "SELECT COUNT(*) FROM " + table + "_queue WHERE name = ?", job)
                                == WAITERS + 1);
            }

            finish.countDown();
            long holderToken = holder.get(30, TimeUnit.SECONDS);
            long previous = releasedAt.get();
            List<Long> grantedAt = new ArrayList<>();
            for (Future<Long> waiter : waiters) {
                grantedAt.add(waiter.get(60, TimeUnit.SECONDS));
            }
            grantedAt.sort(null);
            for (long at : grantedAt) {
                long handOff = TimeUnit.NANOSECONDS.toMillis(at - previous);
                handOffMillis.add(handOff);
                // The next waiter was granted long before the 30 s safety poll: woken, not polling.
                assertThat(handOff).as("hand-off after the restart").isLessThan(10_000);
                previous = at;
            }
            assertThat(leases.find(job).orElseThrow().token()).isGreaterThan(holderToken);
            return restart;
        }
    }

    /** lock() until granted, retrying after typed errors; then a fenced write and the release. Returns when granted (nanos). */
    private static long waitAndWork(
            LeaseService leases,
            DataSource app,
            FaultChecker checker,
            Queue<DatabaseException> errors,
            String job,
            String owner)
            throws Exception {
        while (true) {
            Lease lease;
            try {
                lease = leases.acquire(job, owner, SHORT_TTL.multipliedBy(5), WAIT);
            } catch (DatabaseException e) {
                errors.add(e);
                Thread.sleep(50); // backs off while the database is away, as an application would
                continue;
            }
            long grantedAt = System.nanoTime();
            checker.granted(lease);
            assertThat(writeRetrying(checker, app, job, owner, lease.token())).isTrue();
            assertThat(checker.ended(lease)).isTrue();
            leases.release(lease);
            return grantedAt;
        }
    }

    /** A fenced write that retries when the pool handed out a connection the restart had killed. */
    private static boolean writeRetrying(FaultChecker checker, DataSource app, String name, String owner, long token)
            throws SQLException {
        for (int attempt = 1; ; attempt++) {
            try {
                return checker.write(app, name, owner, token);
            } catch (SQLException e) {
                String state = e.getSQLState();
                boolean lostConnection = state != null && (state.startsWith("08") || state.startsWith("57P"));
                if (!lostConnection || attempt == 3) {
                    throw e;
                }
            }
        }
    }

    /**
     * Whether {@code thread} waits out its backoff inside {@link LeaseService#acquire} after a refused
     * attempt (on its wake-up semaphore, which a release through the same service signals).
     */
    private static boolean backingOff(Thread thread) {
        if (thread == null) {
            return false;
        }
        boolean sleeping = false;
        for (StackTraceElement frame : thread.getStackTrace()) {
            if (frame.getClassName().equals(java.util.concurrent.Semaphore.class.getName())
                    && frame.getMethodName().equals("tryAcquire")) {
                sleeping = true;
            }
            if (sleeping
                    && frame.getClassName().equals(LeaseService.class.getName())
                    && frame.getMethodName().equals("acquire")) {
                return true;
            }
        }
        return false;
    }

    private static void awaitBlocked(FaultDatabase db, String table) throws Exception {
        String sql = db.kind() == TestDatabase.Kind.POSTGRESQL
                ? "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
                        + " AND query LIKE ?"
                : "SELECT COUNT(*) FROM information_schema.processlist WHERE id <> CONNECTION_ID() AND info LIKE ?";
        await("the acquire blocks on the row lock")
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(10))
                .until(() -> count(db, sql, "%INSERT INTO " + table + " %") == 1);
    }

    private static long count(FaultDatabase db, String sql, Object... parameters) {
        try {
            return db.queryLong(sql, parameters);
        } catch (SQLException e) {
            return -1;
        }
    }

    /** The application's pool, counting the connections borrowed per thread name. */
    static final class Borrows implements DataSource {
        private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();
        private final DataSource target;
        private final DataSource proxy;

        Borrows(DataSource target) {
            this.target = target;
            this.proxy = (DataSource) Proxy.newProxyInstance(
                    Borrows.class.getClassLoader(), new Class<?>[] {DataSource.class}, (p, method, args) -> {
                        if (method.getName().equals("getConnection")) {
                            counts.computeIfAbsent(Thread.currentThread().getName(), k -> new AtomicInteger())
                                    .incrementAndGet();
                        }
                        try {
                            return method.invoke(target, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }

        /** Connections borrowed by threads whose name starts with {@code prefix}. */
        int borrows(String prefix) {
            return counts.entrySet().stream()
                    .filter(e -> e.getKey().startsWith(prefix))
                    .mapToInt(e -> e.getValue().get())
                    .sum();
        }

        @Override
        public Connection getConnection() throws SQLException {
            return proxy.getConnection();
        }

        @Override
        public Connection getConnection(String username, String password) throws SQLException {
            return proxy.getConnection(username, password);
        }

        @Override
        public java.io.PrintWriter getLogWriter() throws SQLException {
            return target.getLogWriter();
        }

        @Override
        public void setLogWriter(java.io.PrintWriter out) throws SQLException {
            target.setLogWriter(out);
        }

        @Override
        public void setLoginTimeout(int seconds) throws SQLException {
            target.setLoginTimeout(seconds);
        }

        @Override
        public int getLoginTimeout() throws SQLException {
            return target.getLoginTimeout();
        }

        @Override
        public java.util.logging.Logger getParentLogger() throws java.sql.SQLFeatureNotSupportedException {
            return target.getParentLogger();
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            return iface.isInstance(this) ? iface.cast(this) : target.unwrap(iface);
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) throws SQLException {
            return iface.isInstance(this) || target.isWrapperFor(iface);
        }
    }
}
