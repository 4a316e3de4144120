package dev.holdfast.lease;

import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.Statement;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import javax.sql.DataSource;

/**
 * PostgreSQL wake-ups for blocked {@link LeaseService#lock} callers: one daemon thread per service
 * holds one pooled connection that {@code LISTEN}s on the table's channel, and releases a local
 * waiter when a release names it (payload {@code <length of name>:<name><waiter id>}, the id of
 * one {@code lock} call).
 *
 * <p>The core depends on the JDK only, so pgjdbc's {@code PGConnection.getNotifications(int)} is
 * called by reflection; without pgjdbc (or a pool that cannot unwrap to it) the listener never
 * listens ({@link #isListening()} stays false; {@link #start} returns false only once closed) and
 * waiters poll. While the connection is down, waiters poll too; after a reconnect every
 * waiter is woken once, as notifications may have been missed. The connection is {@code UNLISTEN}ed
 * before it goes back to the pool, so no pooled connection keeps collecting notifications.
 */
final class PgWakeUps implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(PgWakeUps.class.getName());

    private final DataSource dataSource;
    private final String channel;
    private final ConcurrentHashMap<String, Set<Semaphore>> waiters = new ConcurrentHashMap<>();
    private volatile boolean listening;
    private volatile boolean closed;
    private Thread thread;
    /** Listener thread only: an outage was logged and its end is not yet. */
    private boolean outageReported;

    PgWakeUps(DataSource dataSource, String channel) {
        this.dataSource = dataSource;
        this.channel = channel;
    }

    /**
     * Starts the listener if not yet done, without waiting for it: its first connection may be long
     * in coming (an exhausted pool), and a waiter's bound must not wait for it. True unless
     * listening is impossible (closed, or no pgjdbc); while not yet {@link #isListening()}, waiters
     * poll, and the listener wakes every registered waiter once it listens.
     */
    boolean start() {
        synchronized (this) {
            if (closed) {
                return false;
            }
            if (thread == null) {
                thread = new Thread(this::run, "holdfast-lease-listener-" + channel);
                thread.setDaemon(true);
                thread.start();
            }
        }
        return true;
    }

    boolean isListening() {
        return listening;
    }

    /**
     * The payload a release sends for this waiter: PostgreSQL's {@code length(name)} counts
     * characters (code points), not UTF-16 units, so neither may this.
     */
    static String key(String name, String waiter) {
        return name.codePointCount(0, name.length()) + ":" + name + waiter;
    }

    void register(String key, Semaphore signal) {
        waiters.computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet()).add(signal);
    }

    void unregister(String key, Semaphore signal) {
        waiters.computeIfPresent(key, (k, set) -> {
            set.remove(signal);
            return set.isEmpty() ? null : set;
        });
    }

    private void wakeAll() {
        waiters.values().forEach(set -> set.forEach(Semaphore::release));
    }

    private void run() {
        long backoffMillis = 50;
        while (!closed) {
            try (Connection c = dataSource.getConnection()) {
                listen(c);
                backoffMillis = 50;
            } catch (Exception e) {
                // Down: waiters fall back to polling until the next connection listens. Said once per outage.
                if (!outageReported && !closed) {
                    LOG.log(System.Logger.Level.WARNING, "Lease wake-ups (LISTEN " + channel + ") stopped: blocking"
                            + " lease waiters poll until the listener connects again", e);
                }
                outageReported = true;
            } finally {
                listening = false;
                wakeAll();
            }
            if (!closed) {
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
            LOG.log(System.Logger.Level.WARNING, "Lease wake-ups disabled: the pool's connections are not pgjdbc"
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
            s.execute("LISTEN " + channel);
            peek.disable();
            try {
                listening = true;
                if (outageReported) {
                    LOG.log(System.Logger.Level.INFO, "Lease wake-ups (LISTEN " + channel + ") resumed");
                    outageReported = false;
                }
                wakeAll();
                while (!closed) {
                    Object[] notifications = (Object[]) getNotifications.invoke(pg, 250);
                    if (notifications == null) {
                        continue;
                    }
                    for (Object n : notifications) {
                        Set<Semaphore> set = waiters.get((String) getParameter.invoke(n));
                        if (set != null) {
                            set.forEach(Semaphore::release);
                        }
                    }
                }
            } finally {
                listening = false;
                peek.restore();
                s.execute("UNLISTEN " + channel);
            }
        } finally {
            if (!autoCommit) {
                c.setAutoCommit(false);
            }
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
        private final Object stream;
        private final java.lang.reflect.Field field;
        private long saved;

        private StreamPeek(Object stream, java.lang.reflect.Field field) {
            this.stream = stream;
            this.field = field;
        }

        static StreamPeek of(Connection c, Object pg) {
            try {
                Object executor = pg.getClass().getMethod("getQueryExecutor").invoke(pg);
                Class<?> base = load(c, "org.postgresql.core.QueryExecutorBase");
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
                } catch (ReflectiveOperationException | RuntimeException e) {
                    // leave the driver as it is
                }
            }
        }

        void restore() {
            if (field != null) {
                try {
                    field.setLong(stream, saved);
                } catch (ReflectiveOperationException | RuntimeException e) {
                    // the connection is evicted or closed anyway
                }
            }
        }
    }

    private static Class<?> load(Connection c, String name) {
        for (ClassLoader loader : new ClassLoader[] {
                Thread.currentThread().getContextClassLoader(), PgWakeUps.class.getClassLoader(),
                c.getClass().getClassLoader()}) {
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
