package dev.holdfast.lease.internal;

import dev.holdfast.internal.Invariants;
import org.jspecify.annotations.Nullable;

import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;

/**
 * PostgreSQL wake-ups for blocked {@code LeaseService#acquire} callers: one daemon thread per service
 * holds one pooled connection that {@code LISTEN}s on its own channel (the table's stem and its
 * backend pid, {@link PgLeaseSql#listenerChannel}), and wakes a local waiter when a release
 * names it (payload {@code <length of name>:<name><waiter id>}, the id of
 * one {@code acquire} call), handing it the grant the release made for it when the payload carries
 * one ({@code  <token> <acquired µs> <expires µs>} after the id, epoch microseconds). The payloads
 * are trusted: a role that may {@code NOTIFY} on the channel may write the lease table too. A
 * hand-off notifies only the listener its waiter published, so a grant wakes one service, not all.
 *
 * <p>The core depends on the JDK only, so pgjdbc's {@code PGConnection.getNotifications(int)} is
 * called by reflection; without pgjdbc (or a pool that cannot unwrap to it) the listener never
 * listens ({@link #listening()} stays false; {@link #start} returns false only once closed) and
 * waiters poll. While the connection is down, waiters poll too; after a reconnect every
 * waiter is woken once, as notifications may have been missed. While it listens, the connection
 * holds an advisory lock that tells hand-offs it is alive ({@link PgLeaseSql#LISTENER_LOCK_KEY});
 * it gives the lock back and is {@code UNLISTEN}ed before it goes back to the pool, so no pooled
 * connection keeps a lock or collects notifications.
 *
 * <p>Before each connection listens, {@link NotifyProbe} checks that a notification reaches it while
 * it idles; behind a transaction pooler none does, and the wake-ups end for good ({@link #behindPooler()}),
 * logged once, before any lock is taken: waiters poll. The connection may come from a data source of
 * its own that bypasses the pooler ({@code LeaseService.Builder#listenerDataSource}).
 */
public final class PgWakeUps extends WakeUps {

    private static final System.Logger LOG = System.getLogger(PgWakeUps.class.getName());

    private final DataSource dataSource;
    /** The lease table, as configured (for names and log lines). */
    private final String table;
    /** {@link PgLeaseSql#listenerLockSql}: the listener's lock, pid and the table's resolved stem. */
    private final String lockSql;

    private final ConcurrentHashMap<String, Set<Waiter>> waiters = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.LongAdder grantsHeard = new java.util.concurrent.atomic.LongAdder();
    private volatile boolean listening;
    /** The listener connection's backend pid while it listens, else null. */
    private volatile @Nullable Integer listenerPid;

    private volatile boolean closed;
    /** Set once the probe found that notifications do not reach this connection while it idles. */
    private volatile boolean pooled;

    private @Nullable Thread thread;
    /** Listener thread only: an outage was logged and its end is not yet. */
    private boolean outageReported;

    /** How long the listener waits for its probe notification before it concludes that a pooler drops them. */
    private final long probeMillis;

    /**
     * @param dataSource where the listener's connection comes from: the service's pool, or a direct
     *                   one that bypasses a transaction-pooling PgBouncer
     */
    PgWakeUps(DataSource dataSource, PgLeaseSql sql, long probeMillis, LocalPollers pollers) {
        super(pollers);
        this.dataSource = dataSource;
        this.table = sql.table;
        this.lockSql = sql.listenerLockSql();
        this.probeMillis = probeMillis;
    }

    /**
     * Starts the listener if not yet done, without waiting for it: its first connection may be long
     * in coming (an exhausted pool), and a waiter's bound must not wait for it. True unless
     * listening is impossible (closed, or no pgjdbc); while not yet {@link #listening()}, waiters
     * poll, and the listener wakes every registered waiter once it listens.
     */
    boolean start() {
        synchronized (this) {
            if (closed || pooled) {
                return false;
            }
            if (thread == null) {
                thread = new Thread(this::run, "holdfast-lease-listener-" + table);
                thread.setDaemon(true);
                thread.start();
            }
        }
        return true;
    }

    @Override
    boolean listening() {
        return listening;
    }

    /** Whether the probe found that a pooler (PgBouncer in transaction mode) keeps notifications from the listener. */
    @Override
    boolean behindPooler() {
        return pooled;
    }

    /**
     * A waiting call is notified if the listener can start (it may not listen yet: until it does, the
     * call polls, and it wakes every registered call when it starts); else it polls.
     */
    @Override
    Waiter enter(String name, @Nullable String id) {
        if (id == null || !start()) {
            return super.enter(name, id);
        }
        Waiter w = new Waiter(id, true);
        waiters.computeIfAbsent(key(name, id), k -> ConcurrentHashMap.newKeySet())
                .add(w);
        return w;
    }

    @Override
    void exit(String name, Waiter w) {
        if (!w.notified) {
            super.exit(name, w);
            return;
        }
        waiters.computeIfPresent(key(name, Invariants.nonNull(w.id, "a notified waiter queues")), (k, set) -> {
            set.remove(w);
            return set.isEmpty() ? null : set;
        });
    }

    @Override
    @Nullable
    Integer wakeUpConnection(Waiter w) {
        return w.notified ? listenerPid() : null;
    }

    @Override
    boolean notifies(Waiter w) {
        return w.notified && listening;
    }

    /**
     * The backend pid of the listening connection, written into a waiter's queue entry: a release
     * hands the lease only to a waiter whose listener is alive. Null while not listening.
     */
    @Nullable
    Integer listenerPid() {
        return listening ? listenerPid : null;
    }

    /**
     * The payload a release sends for this waiter: PostgreSQL's {@code length(name)} counts
     * characters (code points), not UTF-16 units, so neither may this.
     */
    public static String key(String name, String waiter) {
        return name.codePointCount(0, name.length()) + ":" + name + waiter;
    }

    /** Tests: how many hand-off notifications (each carrying a grant) reached this listener, taken or not. */
    @Override
    long grantsHeard() {
        return grantsHeard.sum();
    }

    private void wakeAll() {
        waiters.values().forEach(set -> set.forEach(w -> w.signal.release()));
    }

    /** Wakes the waiter a payload names, handing it the grant the payload carries; ignores a payload it cannot read. */
    void deliver(String payload) {
        try {
            int colon = payload.indexOf(':');
            int length = Integer.parseInt(payload.substring(0, colon));
            int idEnd = payload.indexOf(' ', payload.offsetByCodePoints(colon + 1, length));
            String key = idEnd < 0 ? payload : payload.substring(0, idEnd);
            Waiter.Handed handed = null;
            if (idEnd >= 0) {
                String[] grant = payload.substring(idEnd + 1).split(" ");
                handed = new Waiter.Handed(
                        Long.parseLong(grant[0]), instant(Long.parseLong(grant[1])), instant(Long.parseLong(grant[2])));
            }
            if (handed != null) {
                grantsHeard.increment();
            }
            Set<Waiter> set = waiters.get(key);
            if (set != null) {
                for (Waiter w : set) {
                    if (handed != null) {
                        w.hand(handed);
                    }
                    w.signal.release();
                }
            }
        } catch (RuntimeException e) {
            // not one of ours (a NOTIFY by someone else on the channel)
        }
    }

    private static Instant instant(long epochMicros) {
        return Instant.EPOCH.plus(epochMicros, ChronoUnit.MICROS);
    }

    private void run() {
        long backoffMillis = 50;
        while (!closed && !pooled) {
            try (Connection c = dataSource.getConnection()) {
                listen(c);
                backoffMillis = 50;
            } catch (Exception e) {
                // Down: waiters fall back to polling until the next connection listens. Said once per outage.
                if (!outageReported && !closed) {
                    LOG.log(
                            System.Logger.Level.WARNING,
                            "Lease wake-ups (table " + table + ") stopped: blocking"
                                    + " lease waiters poll until the listener connects again",
                            e);
                }
                outageReported = true;
            } finally {
                listening = false;
                wakeAll();
            }
            if (!closed && !pooled) {
                try {
                    Thread.sleep(backoffMillis);
                } catch (InterruptedException e) {
                    return;
                }
                backoffMillis = Math.min(2000, backoffMillis * 2);
            }
        }
    }

    private void listen(Connection c) throws Exception {
        Class<?> pgConnection = load(c, "org.postgresql.PGConnection");
        Class<?> pgNotification = load(c, "org.postgresql.PGNotification");
        if (pgConnection == null || pgNotification == null || !c.isWrapperFor(pgConnection)) {
            closed = true; // no way to listen: never retry, waiters poll
            LOG.log(
                    System.Logger.Level.WARNING,
                    "Lease wake-ups disabled: the pool's connections are not pgjdbc"
                            + " connections (org.postgresql.PGConnection), so blocking lease waiters poll");
            return;
        }
        Object pg = c.unwrap(pgConnection);
        Method getNotifications = pgConnection.getMethod("getNotifications", int.class);
        StreamPeek peek = StreamPeek.of(c, pg);
        Method getParameter = pgNotification.getMethod("getParameter");
        boolean autoCommit = c.getAutoCommit();
        if (!autoCommit) {
            c.setAutoCommit(true);
        }
        try (Statement s = c.createStatement()) {
            if (!NotifyProbe.deliveredWhileIdle(dataSource, s, pg, getNotifications, getParameter, probeMillis)) {
                pooled = true; // for good: waiters poll, and new ones do not wait for a listener
                LOG.log(
                        System.Logger.Level.WARNING,
                        "LeaseRow wake-ups (table " + table + ") disabled: a notification"
                                + " sent to this listener did not arrive within " + probeMillis
                                + " ms, as behind PgBouncer in"
                                + " transaction pooling mode, where LISTEN does not survive the transaction. Blocking lease"
                                + " waiters poll instead. To have them woken, give the listener a direct connection:"
                                + " LeaseService.builder(pool).listenerDataSource(directToPostgresql)");
                return;
            }
            boolean lockHeld = false;
            String listened = null;
            try {
                // The lock tells hand-offs this listener is alive; its pid is the one the lock is taken for.
                Listener locked = lockListener(s);
                for (long backoffMillis = 20; locked == null; backoffMillis = Math.min(1000, backoffMillis * 2)) {
                    if (closed) {
                        return;
                    }
                    if (backoffMillis == 20) {
                        LOG.log(
                                System.Logger.Level.INFO,
                                "Lease wake-ups (table " + table + ") wait until a"
                                        + " transaction that checked this connection's backend pid ends; waiters poll meanwhile");
                    }
                    Thread.sleep(backoffMillis);
                    locked = lockListener(s);
                }
                lockHeld = true;
                int pid = locked.pid();
                listened = PgLeaseSql.listenerChannel(locked.stem(), pid);
                s.execute("LISTEN " + listened); // the last statement, as pg_stat_activity shows it
                listenerPid = pid;
                peek.disable();
                listening = true;
                if (outageReported) {
                    LOG.log(System.Logger.Level.INFO, "Lease wake-ups (LISTEN " + listened + ") resumed");
                    outageReported = false;
                }
                wakeAll();
                while (!closed) {
                    Object[] notifications = (Object[]) getNotifications.invoke(pg, 250);
                    if (notifications == null) {
                        continue;
                    }
                    for (Object n : notifications) {
                        deliver((String) getParameter.invoke(n));
                    }
                }
            } finally {
                listening = false;
                listenerPid = null;
                peek.restore();
                try {
                    if (listened != null) {
                        s.execute("UNLISTEN " + listened);
                    }
                } finally {
                    if (lockHeld) {
                        s.execute(PgLeaseSql.LISTENER_UNLOCK);
                    }
                }
            }
        } finally {
            if (!autoCommit) {
                c.setAutoCommit(false);
            }
        }
    }

    /** A listener that holds its lock: its connection's backend pid, and the table's stem as resolved there. */
    private record Listener(int pid, String stem) {}

    /** Takes the listener's lock, or null if a transaction keeps it from the lock. */
    private @Nullable Listener lockListener(Statement s) throws SQLException {
        try (ResultSet rs = s.executeQuery(lockSql)) {
            return rs.next() && rs.getBoolean(1) ? new Listener(rs.getInt(2), rs.getString(3)) : null;
        }
    }

    /**
     * pgjdbc 42.7's {@code getNotifications(timeout)} returns only after one more "is anything
     * pending?" check, a 1 ms blocking socket read that, on timeout, is not rate-limited — so
     * every wake-up arrives at least 1 ms late (measured here: NOTIFY delivery p50 1.3 ms with it,
     * 0.2 ms without). That check is skipped while the stream's private
     * {@code nextStreamAvailableCheckTime} lies in the future, so on the listener connection only,
     * and only while it listens, we set it far ahead; the blocking read that waits for the next
     * notification is unaffected. Restored before the connection goes back to the pool. If the
     * driver's internals differ (another version), nothing is changed and the 1 ms stays.
     */
    static final class StreamPeek {
        private final @Nullable Object stream;
        private final java.lang.reflect.@Nullable Field field;
        private long saved;
        private boolean disabled;

        private StreamPeek(@Nullable Object stream, java.lang.reflect.@Nullable Field field) {
            this.stream = stream;
            this.field = field;
        }

        static StreamPeek of(Connection c, Object pg) {
            try {
                Object executor = pg.getClass().getMethod("getQueryExecutor").invoke(pg);
                Class<?> base = load(c, "org.postgresql.core.QueryExecutorBase");
                if (base == null) {
                    return new StreamPeek(null, null);
                }
                java.lang.reflect.Field streamField = base.getDeclaredField("pgStream");
                streamField.setAccessible(true);
                Object stream = streamField.get(executor);
                java.lang.reflect.Field check = stream.getClass().getDeclaredField("nextStreamAvailableCheckTime");
                check.setAccessible(true);
                if (check.getType() != long.class) {
                    return new StreamPeek(null, null);
                }
                return new StreamPeek(stream, check);
            } catch (ReflectiveOperationException | RuntimeException e) {
                return new StreamPeek(null, null);
            }
        }

        void disable() {
            if (field != null) {
                try {
                    saved = field.getLong(stream);
                    field.setLong(stream, Long.MAX_VALUE);
                    disabled = true;
                } catch (ReflectiveOperationException | RuntimeException e) {
                    // leave the driver as it is
                }
            }
        }

        void restore() {
            if (disabled && field != null) { // disabled only where there is a field
                disabled = false;
                try {
                    field.setLong(stream, saved);
                } catch (ReflectiveOperationException | RuntimeException e) {
                    // the connection is evicted or closed anyway
                }
            }
        }
    }

    private static @Nullable Class<?> load(Connection c, String name) {
        for (ClassLoader loader : new ClassLoader[] {
            Thread.currentThread().getContextClassLoader(),
            PgWakeUps.class.getClassLoader(),
            c.getClass().getClassLoader()
        }) {
            try {
                return Class.forName(name, false, loader);
            } catch (ClassNotFoundException | RuntimeException e) {
                // try the next loader
            }
        }
        return null;
    }

    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            closed = true;
            t = thread;
        }
        if (t != null) {
            try {
                t.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        wakeAll();
    }
}
