package dev.holdfast.lease.internal;

import org.jspecify.annotations.Nullable;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import javax.sql.DataSource;

/**
 * MariaDB wake-ups for blocked {@code LeaseService#acquire} callers, which poll (MariaDB has no
 * {@code LISTEN}): a release that hands the lease to a waiter of this service interrupts this
 * service's wake-up connection ({@code KILL QUERY}, {@link HandOffWakes}), whose wait then ends, and
 * what was handed here is read and each grant given to its waiting call at once.
 *
 * <p>Two pooled connections, kept while the service has polling {@code acquire} calls, closed after a second
 * without any: the wake-up connection, whose id is what the service's waiters publish in their queue entries
 * (a release hands the lease only to a waiter whose connection is alive, {@link MariaDbHandOff#markAlive}), and
 * the one that holds its doorbell, a user-level lock. The wake-up connection waits for its doorbell in one
 * statement that first looks for a live lease handed to one of its waiters and not read yet
 * ({@link MariaDbLeaseSql#watchSql}): a kill that came before the statement began is never lost, since its hand-off
 * committed before, and one that comes during it ends the wait. A lock wait and not a {@code SLEEP}: MariaDB may
 * stall a kill of a {@code SLEEP} for seconds when kills overlap. A wait ends by itself after
 * {@link #MAX_SLEEP_NANOS} at most, so a release that may not kill it (another database user without
 * {@code CONNECTION ADMIN}) is seen by the next wait's look.
 *
 * <p><b>Who watches.</b> A waiting call itself, in turn ({@link #await}): the call that finds the connection free
 * runs the watch (it leads), so that a grant handed to it reaches it without a hop to another thread; the other
 * waiting calls of the service wait until the leader wakes them, with a grant it read for them or with the turn
 * when it goes. A leader watches until its own grant comes, its wait ends or the thread asks for a turn. A daemon
 * thread per service does the rest between turns: it borrows and replaces the connections, leaves the queue entries
 * of granted waiters ({@link GrantedEntries}) and reads, for a grant a leader took itself, whom that grant's release
 * will hand the lease to ({@link NextWaiters}), off the leader's way; a leader that fails leaves the outage to it.
 *
 * <p>A wake-up is a hint: the grant stays the release's (or the waiter's own look's) decision, and a waiter still
 * looks by itself, every 50 ms while the connection is up, at its usual poll otherwise. While the connections are
 * down (or the pool has none to spare beside them), waiters poll; the outage is logged once. The connections never
 * go back to the pool: they are retired ({@link dev.holdfast.jdbc.ConnectionPool#retire}), so that a late kill can
 * only find a connection id that no longer exists.
 */
final class MariaDbWakeUps extends WakeUps {

    /** A watch's longest wait: a leader sees its own bound, and the thread gets its turn, at least this often. */
    private static final long MAX_SLEEP_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
    /** A watch shorter than this is not worth a statement. */
    private static final long MIN_WATCH_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);

    final MariaDbLeaseSql sql;
    /** Where the waiter read as next after a grant delivered here goes, for that grant's release. */
    private final NextWaiters nextWaiters;

    private final SpareConnections spares;
    private final long sleepNanos;
    /** Queue entries of this service's granted waiters, to leave. */
    private final GrantedEntries entries;
    /** The wake-up connection; used only by whoever has the {@link #turn}. */
    private final WakeUpConnection connection;
    /** Who runs statements on the connection: the thread, or a waiting call that watches. */
    private final ReentrantLock turn = new ReentrantLock();
    /** Waiting calls of this service in {@link #await}: whoever lets go of the turn wakes the oldest, which leads next. */
    private final ConcurrentLinkedDeque<Waiter> followers = new ConcurrentLinkedDeque<>();

    /** Whether anything changed that the thread should look at (guarded by this). */
    private boolean changed;

    private volatile boolean closed;
    private @Nullable Thread thread;
    /** Whether the connection is up and published: waiting calls watch on it, and look by themselves less often. */
    private volatile boolean watching;
    /** A leader's failure on the connection: the thread takes it for an outage. */
    private volatile @Nullable SQLException failure;
    /** Whether a watch ended well since the last failure: the next failure backs off from the start. */
    private volatile boolean watchedSinceFailure;

    // Guarded by the turn.
    /** The grants the last read found handed here (delivered, or to waiters gone): the next watch looks past them. */
    private List<MariaDbHandOff.HandedHere> seen = List.of();
    /** Whether the last statement was interrupted by a release's kill: read what it handed here. */
    private boolean killed;
    /** Grants given while a leader took its own: the thread reads whom their releases hand the lease to. */
    private final List<MariaDbHandOff.HandedHere> toReadNext = new ArrayList<>();

    // The thread's own.
    /** Before this ({@link System#nanoTime()}), no connections are borrowed: the last ones could not be published. */
    private long unpublishedUntil = System.nanoTime();

    MariaDbWakeUps(
            DataSource dataSource,
            dev.holdfast.jdbc.ConnectionPool pool,
            MariaDbLeaseSql sql,
            LocalPollers pollers,
            LeaseThreads threads,
            long safetyPollNanos,
            NextWaiters nextWaiters) {
        super(pollers);
        this.sql = sql;
        this.nextWaiters = nextWaiters;
        this.spares = new SpareConnections(dataSource, pool, threads, sql.table);
        this.entries = new GrantedEntries(sql);
        // Once it is alive, each waiter looks, and publishes it: a release may hand it the lease from then on.
        this.connection = new WakeUpConnection(
                spares, pool, sql.table, pollers::wakeAll, System.getLogger(MariaDbWakeUps.class.getName()));
        this.sleepNanos = Math.max(MIN_WATCH_NANOS, Math.min(MAX_SLEEP_NANOS, safetyPollNanos));
    }

    /** A call of this service waits (polling): the connection is borrowed if it is not up. */
    private synchronized void waiting() {
        if (!watching) {
            wakeThread();
        }
    }

    /** A waiting call was granted: leave its queue {@code entry} on the connection. */
    @Override
    synchronized void leave(GrantedEntries.Leave entry) {
        entries.add(entry);
        wakeThread();
    }

    /** Whether the service has its wake-up connection now: else a granted waiter leaves the queue itself. */
    @Override
    boolean leavesEntries() {
        return connection.listener() != null;
    }

    /** Where entries go that the connection could not leave (its failure, the service closing). */
    @Override
    void leaveFailuresTo(GrantedEntries.Leaving leaving) {
        entries.elsewhere(leaving);
    }

    /** Whether the connection is up and published: waiting calls watch on it for hand-offs to them. */
    @Override
    boolean watching() {
        return watching;
    }

    /** How many of the wake-ups' connections were handed to the pool to retire. */
    @Override
    long retired() {
        return connection.retired();
    }

    /** The id waiters publish so that a release may hand them the lease, or null. */
    @Override
    @Nullable
    Integer wakeUpConnection(Waiter w) {
        return connection.listener();
    }

    /**
     * Waits until a wake-up comes for {@code w}, or its poll is due: {@code pollNanos} from now, or
     * {@code safetyNanos} while the wake-up connection is up; never past {@code deadline}. While the
     * connection is up, the waiter watches on it itself when it is its turn ({@link #await}).
     */
    @Override
    boolean awaitPoll(Waiter w, long pollNanos, long safetyNanos, long deadline) throws InterruptedException {
        waiting();
        follow(w);
        try {
            long start = System.nanoTime();
            while (true) {
                long until = start + (watching ? Math.max(pollNanos, safetyNanos) : pollNanos);
                long left = Math.min(until, deadline) - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                if (await(w, left)) {
                    return true;
                }
            }
        } finally {
            unfollow(w);
        }
    }

    /**
     * Waits at most {@code nanos} for a wake-up of {@code me}, a waiting call of this service that {@link #follow}s:
     * watches on the connection itself if it is up and free (leads), else waits to be woken.
     *
     * @return whether it was woken to look (a grant was handed to it, or it should look now)
     */
    private boolean await(Waiter me, long nanos) throws InterruptedException {
        long until = System.nanoTime() + nanos;
        if (lead(me, until)) {
            return true;
        }
        // Rung by a leader, by the one that lets go of the turn (then it leads), or by a release of this service;
        // a leader whose watch ended short of its bound, or failed, waits the rest too.
        long left = until - System.nanoTime();
        if (left <= 0 || !me.signal.tryAcquire(left, TimeUnit.NANOSECONDS)) {
            return false;
        }
        me.signal.drainPermits();
        return me.lookNow.getAndSet(false);
    }

    /** {@code me} waits from now on: whoever lets go of the turn wakes it, so that it may lead. */
    private void follow(Waiter me) {
        followers.addLast(me);
    }

    /** {@code me} waits no longer. */
    private void unfollow(Waiter me) {
        followers.remove(me);
    }

    /**
     * Watches for {@code me} until it is woken or {@code until} passes, if it may take the turn: true if woken. False at
     * once if it may not (the connection is not up, or another has the turn), and after a failure, which it leaves
     * to the thread.
     */
    private boolean lead(Waiter me, long until) {
        // The thread's turns are short and rare: it goes first.
        if (!watching || closed || failure != null || turn.hasQueuedThreads() || !turn.tryLock()) {
            return false;
        }
        try {
            if (connection.listener() == null) {
                return false;
            }
            while (true) {
                try {
                    readIfKilled(me);
                    if (me.lookNow.getAndSet(false)) {
                        return true;
                    }
                    long left = until - System.nanoTime();
                    // The thread waits for its turn (entries to leave, say): it wakes this call when done.
                    if (left < MIN_WATCH_NANOS
                            || closed
                            || turn.hasQueuedThreads()
                            || Thread.currentThread().isInterrupted()) {
                        return false;
                    }
                    connection.keepBell();
                    MariaDbHandOff.Watched watched = connection.watch(sql, seen, Math.min(left, sleepNanos) / 1e9);
                    watchedSinceFailure = true;
                    switch (watched) {
                        case HANDED -> give(connection.handedHere(sql), me);
                        case WOKEN -> killed = true; // read first in the next round
                        case BELL_FREE ->
                            throw new SQLException("the doorbell's connection is gone"); // both are replaced
                        case QUIET -> {
                            // the bound passed: look again
                        }
                    }
                } catch (SQLException e) {
                    if (!MariaDbHandOff.interrupted(e)) {
                        throw e;
                    }
                    killed = true; // a release's kill met another statement: what it handed is read next
                }
            }
        } catch (SQLException | RuntimeException e) {
            failure = e instanceof SQLException s ? s : new SQLException(e);
            setWatching(false);
            wakeThread();
            return false;
        } finally {
            letGo(me);
        }
    }

    /** Lets go of the turn and wakes the oldest waiting call other than {@code self}: it may lead now. */
    private void letGo(@Nullable Waiter self) {
        turn.unlock();
        if (watching && !turn.isLocked()) {
            for (Waiter w : followers) {
                if (w != self) {
                    w.signal.release();
                    break;
                }
            }
        }
    }

    private synchronized void wakeThread() {
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

    /** Keeps the connection up while the service has waiters, and does its work between their turns, until closed. */
    private void serve() throws SQLException {
        while (true) {
            synchronized (this) {
                if (closed) {
                    return;
                }
                changed = false;
            }
            long wait;
            turn.lock();
            try {
                wait = step();
            } catch (SQLException e) {
                if (!MariaDbHandOff.interrupted(e)) {
                    throw e;
                }
                killed = true; // a release's kill met another statement: what it handed is read next
                wait = -1;
            } finally {
                letGo(null);
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

    /** One turn of the thread: -1 to go on at once, else how long to wait for a change. */
    private long step() throws SQLException {
        SQLException failed = failure;
        if (failed != null) {
            failure = null;
            throw failed;
        }
        readIfKilled(null);
        if (!toReadNext.isEmpty()) {
            List<MariaDbHandOff.HandedHere> given = List.copyOf(toReadNext);
            toReadNext.clear();
            readNext(given);
        }
        if (entries.leave(connection::get)) {
            connection.answered();
        }
        if (pollers.isEmpty()) {
            seen = List.of();
            if (connection.isOpen() && System.nanoTime() - connection.idleSince() >= IDLE_NANOS) {
                setWatching(false);
                connection.close();
            }
            return connection.isOpen() ? IDLE_NANOS : TimeUnit.SECONDS.toNanos(10);
        }
        long unpublished = unpublishedUntil - System.nanoTime();
        if (!connection.isOpen() && unpublished > 0) { // a waiter waking the thread does not hurry it this
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
        connection.keepBell();
        setWatching(true); // the waiting calls watch, in turn
        return IDLE_NANOS;
    }

    /** After a release's kill ended a statement: reads what was handed here and gives it ({@link #give}). */
    private void readIfKilled(@Nullable Waiter leader) throws SQLException {
        if (killed) {
            killed = false;
            if (connection.listener() != null) {
                give(connection.handedHere(sql), leader);
            }
        }
    }

    /**
     * Gives each grant handed to a waiting call of this service to that call, which takes it without a look; then
     * reads, for each, whom its release will hand the lease to ({@link NextWaiters}), unless {@code leader}, the
     * waiting call that read them, got its own: then it goes at once, and the thread reads.
     */
    private void give(List<MariaDbHandOff.HandedHere> handed, @Nullable Waiter leader) throws SQLException {
        List<MariaDbHandOff.HandedHere> given = new ArrayList<>(handed.size());
        boolean own = false;
        for (MariaDbHandOff.HandedHere h : handed) {
            Waiter waiter = pollers.find(h.name(), h.waiter());
            if (waiter != null && waiter.handed() == null) {
                waiter.hand(h.grant());
                waiter.lookNow.set(true);
                if (waiter == leader) {
                    own = true;
                } else {
                    waiter.signal.release();
                }
                given.add(h);
            }
        }
        seen = handed;
        if (own) {
            toReadNext.addAll(given);
            wakeThread();
        } else {
            readNext(given);
        }
    }

    /** Reads, for each grant given here, whom its release will hand the lease to. */
    private void readNext(List<MariaDbHandOff.HandedHere> given) throws SQLException {
        java.sql.Connection c = connection.isOpen() ? connection.get() : null;
        for (MariaDbHandOff.HandedHere h : given) {
            QueuedWaiter next = c == null
                    ? null
                    : MariaDbHandOff.nextWaiter(c, sql, h.name(), h.grant().token());
            if (next != null) {
                nextWaiters.put(h.name(), h.grant().token(), next);
            }
        }
    }

    /** Sets whether the connection is up; when that changes, waiters decide their wait again. */
    private void setWatching(boolean now) {
        boolean before = watching;
        watching = now;
        if (before != now) {
            pollers.nudge(null);
        }
    }

    /** After a failure or at the end: entries are left elsewhere, and the connection is closed. */
    private void discard() {
        turn.lock();
        try {
            setWatching(false);
            seen = List.of();
            killed = false;
            toReadNext.clear();
            failure = null;
            if (connection.isOpen()) {
                try {
                    entries.leave(connection::get);
                } catch (SQLException | RuntimeException e) {
                    // the connection is broken: handed over below
                }
            }
            entries.handOverAll();
            connection.close();
        } finally {
            turn.unlock();
        }
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
