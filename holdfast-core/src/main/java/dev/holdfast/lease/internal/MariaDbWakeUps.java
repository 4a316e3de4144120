package dev.holdfast.lease.internal;

import org.jspecify.annotations.Nullable;

import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * MariaDB wake-ups for blocked {@code LeaseService#acquire} callers, which poll (MariaDB has no
 * {@code LISTEN}): a release that hands the lease to a waiter of this service interrupts this
 * service's wake-up connection ({@code KILL QUERY}, {@link HandOffWakes}), whose wait then ends, and
 * it reads what was handed here and gives each grant to its waiting call at once.
 *
 * <p>One daemon thread per service on two pooled connections, kept while the service has polling
 * {@code lock} calls, closed after a second without any: the wake-up connection, whose id is what the
 * service's waiters publish in their queue entries (a release hands the lease only to a waiter whose
 * connection is alive, {@link MariaDbHandOff#markAlive}), and the one that holds its doorbell, a
 * user-level lock. While it has waiters, the wake-up connection waits for its doorbell in one statement
 * that first looks for a live lease handed to one of its waiters and not read yet
 * ({@link MariaDbLeaseSql#watchSql}): a kill that came before the statement began is never lost, since
 * its hand-off committed before, and one that comes during it ends the wait. A lock wait and not a
 * {@code SLEEP}: MariaDB may stall a kill of a {@code SLEEP} for seconds when kills overlap. A wait ends by
 * itself after {@link #MAX_SLEEP_NANOS} at most, so a release that may not kill it (another database user
 * without {@code CONNECTION ADMIN}) is seen by the next wait's look.
 *
 * <p>A waiter granted through the queue leaves it on this connection after its grant returned
 * ({@link GrantedEntries}), one statement less on its way; after a wake-up, the grant is read first.
 * A wake-up is a hint: the grant stays the release's (or the waiter's own look's) decision, and a waiter
 * still looks by itself, every 50 ms while the connection watches, at its usual poll otherwise. While the
 * connections are down (or the pool has none to spare beside them), waiters poll; the outage is logged
 * once. The connections never go back to the pool: they are closed, so that a late kill can only find a
 * connection id that no longer exists.
 */
final class MariaDbWakeUps implements AutoCloseable {

    /** A watch's longest wait: the thread sees new entries to leave and {@link #close()} at least this often. */
    private static final long MAX_SLEEP_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
    private static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);

    final MariaDbLeaseSql sql;
    private final LocalPollers pollers;
    /** Where the waiter read as next after a grant delivered here goes, for that grant's release. */
    private final NextWaiters nextWaiters;
    private final SpareConnections spares;
    private final double sleepSeconds;
    /** Queue entries of this service's granted waiters, to leave. */
    private final GrantedEntries entries;
    /** The wake-up connection; used by the thread only. */
    private final WakeUpConnection connection;

    /** Whether anything changed that the thread should look at (guarded by this). */
    private boolean changed;
    private volatile boolean closed;
    private @Nullable Thread thread;
    /** Whether the connection watches for hand-offs now: the waiters look by themselves less often. */
    private volatile boolean watching;

    // The thread's own.
    /** The grants the last read found handed here (delivered, or to waiters gone): the next watch looks past them. */
    private List<MariaDbHandOff.HandedHere> seen = List.of();
    /** Whether the last statement was interrupted by a release's kill: read what it handed here. */
    private boolean killed;
    /** Whether a watch ended well since the last failure: the next failure backs off from the start. */
    private boolean watchedSinceFailure;
    /** Before this ({@link System#nanoTime()}), no connections are borrowed: the last ones could not be published. */
    private long unpublishedUntil = System.nanoTime();

    MariaDbWakeUps(DataSource dataSource, MariaDbLeaseSql sql, LocalPollers pollers, LeaseThreads threads, long safetyPollNanos,
                   NextWaiters nextWaiters) {
        this.sql = sql;
        this.nextWaiters = nextWaiters;
        this.pollers = pollers;
        this.spares = new SpareConnections(dataSource, threads, sql.table);
        this.entries = new GrantedEntries(sql);
        // Once it is alive, each waiter looks, and publishes it: a release may hand it the lease from then on.
        this.connection = new WakeUpConnection(spares, sql.table, pollers::wakeAll,
                System.getLogger(MariaDbWakeUps.class.getName()));
        long sleepNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(1), Math.min(MAX_SLEEP_NANOS, safetyPollNanos));
        this.sleepSeconds = sleepNanos / 1e9;
    }

    /** A call of this service waits (polling): the connection watches for hand-offs to it from now on. */
    synchronized void waiting() {
        if (!watching) {
            poke();
        }
    }

    /** A waiting call was granted: leave its queue {@code entry} (if not null) on the connection. */
    synchronized void granted(GrantedEntries.@Nullable Leave entry) {
        if (entry != null) {
            entries.add(entry);
            poke();
        }
    }

    /** Where entries go that the connection could not leave (its failure, the service closing). */
    void leaveFailuresTo(GrantedEntries.Leaving leaving) {
        entries.elsewhere(leaving);
    }

    /** Whether the connection watches for hand-offs to this service's waiters now. */
    boolean watching() {
        return watching;
    }

    /** Whether the service has its wake-up connection now: else a granted waiter leaves the queue itself. */
    boolean connected() {
        return connection.listener() != null;
    }

    /** The id waiters publish so that a release may hand them the lease, or null. */
    @Nullable Integer listener() {
        return connection.listener();
    }

    private void poke() {
        changed = true;
        if (thread == null && !closed) {
            Thread t = new Thread(this::run, "holdfast-lease-wake-ups-" + sql.table);
            t.setDaemon(true);
            thread = t;
            t.start();
        }
        notifyAll();
    }

    private void run() {
        long backoff = TimeUnit.MILLISECONDS.toNanos(50);
        while (true) {
            try {
                serve();
                break; // closed
            } catch (SQLException | RuntimeException e) {
                // The session's live lock went with it (or goes when it is closed). Said once per outage.
                if (!closed) {
                    connection.reportOutage(e);
                }
                discard();
                if (watchedSinceFailure) {
                    watchedSinceFailure = false;
                    backoff = TimeUnit.MILLISECONDS.toNanos(50);
                }
                if (!pause(backoff)) {
                    break;
                }
                backoff = Math.min(TimeUnit.SECONDS.toNanos(2), backoff * 2);
            }
        }
        discard();
    }

    /** Waits {@code nanos} or until closed; false once closed. */
    private synchronized boolean pause(long nanos) {
        long until = System.nanoTime() + nanos;
        try {
            for (long left = nanos; !closed && left > 0; left = until - System.nanoTime()) {
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
        } catch (InterruptedException e) {
            return false;
        }
        return !closed;
    }

    /** Leaves entries and watches for hand-offs while the service has waiters, until closed. */
    private void serve() throws SQLException {
        while (true) {
            synchronized (this) {
                if (closed) {
                    return;
                }
                changed = false;
            }
            long wait;
            try {
                wait = step();
            } catch (SQLException e) {
                if (!MariaDbHandOff.interrupted(e)) {
                    throw e;
                }
                killed = true; // a release's kill met another statement: what it handed is read next
                wait = -1;
            }
            if (wait < 0) {
                continue;
            }
            synchronized (this) {
                if (!changed && !closed) {
                    try {
                        TimeUnit.NANOSECONDS.timedWait(this, wait);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        }
    }

    /** One round on the connection: -1 to go on at once, else how long to wait for a change. */
    private long step() throws SQLException {
        if (killed) {
            killed = false;
            if (connection.listener() != null) { // the waiter's grant first; earlier grants' entries delay nobody
                deliver(connection.handedHere(sql));
            }
        }
        if (entries.leave(connection::get)) {
            connection.answered();
        }
        if (pollers.isEmpty()) {
            setWatching(false);
            seen = List.of();
            if (connection.isOpen() && System.nanoTime() - connection.idleSince() >= IDLE_NANOS) {
                connection.close();
            }
            return connection.isOpen() ? IDLE_NANOS : TimeUnit.SECONDS.toNanos(10);
        }
        long unpublished = unpublishedUntil - System.nanoTime();
        if (!connection.isOpen() && unpublished > 0) { // a waiter's poke does not hurry this
            setWatching(false);
            return unpublished;
        }
        if (connection.get() == null) {
            setWatching(false);
            return Math.max(spares.notBefore() - System.nanoTime(), TimeUnit.MILLISECONDS.toNanos(1));
        }
        if (connection.listener() == null) { // not marked alive (an id past int's range): nothing is handed here
            setWatching(false);
            connection.close();
            unpublishedUntil = System.nanoTime() + IDLE_NANOS; // waiters poll meanwhile; new connections may do better
            return IDLE_NANOS;
        }
        setWatching(true);
        connection.keepBell();
        MariaDbHandOff.Watched watched = connection.watch(sql, seen, sleepSeconds);
        watchedSinceFailure = true;
        switch (watched) {
            case HANDED -> deliver(connection.handedHere(sql));
            case WOKEN -> killed = true; // read first in the next round
            case BELL_FREE -> throw new SQLException("the doorbell's connection is gone"); // both are replaced
            case QUIET -> {
                // the bound passed: look again
            }
        }
        return -1;
    }

    /**
     * Gives each grant handed to a waiting call of this service to that call, which takes it without a look; then
     * reads, for each, whom its release will hand the lease to ({@link NextWaiters}).
     */
    private void deliver(List<MariaDbHandOff.HandedHere> handed) throws SQLException {
        List<MariaDbHandOff.HandedHere> given = new java.util.ArrayList<>(handed.size());
        for (MariaDbHandOff.HandedHere h : handed) {
            PgWakeUps.Waiter waiter = pollers.find(h.name(), h.waiter());
            if (waiter != null && waiter.handed() == null) {
                waiter.hand(h.grant());
                waiter.rung.set(true);
                waiter.signal.release();
                given.add(h);
            }
        }
        seen = handed;
        java.sql.Connection c = connection.get();
        for (MariaDbHandOff.HandedHere h : given) {
            QueuedWaiter next = c == null ? null : MariaDbHandOff.nextWaiter(c, sql, h.name(), h.grant().token());
            if (next != null) {
                nextWaiters.put(h.name(), h.grant().token(), next);
            }
        }
    }

    /** Sets whether the connection watches; when that ends, waiters decide their wait again. */
    private void setWatching(boolean now) {
        boolean before = watching;
        watching = now;
        if (before && !now) {
            pollers.nudge(null);
        }
    }

    /** After a failure or at the end: entries are left elsewhere, and the connection is closed. */
    private void discard() {
        setWatching(false);
        seen = List.of();
        killed = false;
        if (connection.isOpen()) {
            try {
                entries.leave(connection::get);
            } catch (SQLException | RuntimeException e) {
                // the connection is broken: handed over below
            }
        }
        entries.handOverAll();
        connection.close();
    }

    /** Stops the thread; its connection is closed. */
    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            closed = true;
            t = thread;
            notifyAll();
        }
        if (t != null) {
            try {
                t.join(TimeUnit.NANOSECONDS.toMillis(MAX_SLEEP_NANOS) + 2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        pollers.nudge(null);
    }
}
