package dev.holdfast.lease.internal;

import org.jspecify.annotations.Nullable;

import java.sql.SQLException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * MariaDB wake-ups for blocked {@code LeaseService#acquire} callers, which poll (MariaDB has no
 * {@code LISTEN}): a release gives back a user-level lock that other services sleep on in
 * {@code GET_LOCK}, so their waiters look again at once instead of at their next poll.
 *
 * <p>One daemon thread per service on one pooled connection, the wake-up connection, kept while the
 * service has polling {@code lock} calls or holds a bell, given back after a second with neither:
 * <ul>
 *   <li>a <em>bell</em> ({@link MariaDbLeaseSql#bellName}): while the service holds a lease one of its
 *       waiting calls was granted, the connection holds that name's user-level lock; the release gives it
 *       back right after its statement, and it is given back at the latest when the lease's TTL ends;</li>
 *   <li>a <em>sleep</em>: while it holds no bell, the connection sleeps in {@code GET_LOCK} on the bell of
 *       the name of the service's oldest waiting call, if another session holds it. The bell given back
 *       goes to one sleeper at a time, which keeps it while its oldest waiter of that name looks: granted,
 *       the bell is already that grant's; refused (another waiter is first in the queue), it passes the
 *       bell on to the next sleeper; handed by the release to another service's waiter, the sleep statement
 *       itself passes it on. Sleepers queue for the bell in the order they began to sleep, which drifts
 *       from the order of their waiters (a sleeper that passes it on queues again at the end): with 8
 *       services taking turns, the handed waiter's service was the first sleeper in about one hand-off of
 *       six. One connection sleeps on one name: the waiters of other names poll as before.</li>
 * </ul>
 * <p>A waiter granted through the queue leaves it on this connection after its grant returned, before
 * its bell goes back, so the waiter the bell wakes never finds that entry ({@link GrantedEntries}).
 * <p>A wake-up is a hint. The grant stays the queue statement's decision; a waiter whose name the
 * connection sleeps on still looks every 50 ms (a lease that expires, or is force-released,
 * rings no bell), and every other waiter polls as before. While the connection is down (or the pool
 * has none to spare beside it), waiters poll; the outage is logged once. No user-level lock goes back
 * to the pool: the connection gives back all its locks before it returns, or is aborted.
 */
final class MariaDbWakeUps implements AutoCloseable {

    /** A sleep's longest statement: the thread sees new bells and {@link #close()} at least this often. */
    private static final long MAX_SLEEP_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
    private static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long MAX_RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    final MariaDbLeaseSql sql;
    private final LocalPollers pollers;
    private final SpareConnections spares;
    private final long sleepNanos;

    /** Bells this service wants held, by lease name (guarded by this). */
    private final Map<String, Bell> wanted = new HashMap<>();
    /** Bells the connection holds while a rung waiter looks, by lease name (guarded by this). */
    private final Map<String, Pass> passing = new HashMap<>();
    /** How long a rung waiter may take to look before the bell passes on anyway. */
    private static final long PASS_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Queue entries of this service's granted waiters, to leave before their bell goes back. */
    private final GrantedEntries entries;
    /** Whether anything changed that the thread should look at (guarded by this). */
    private boolean changed;
    private volatile boolean closed;
    private @Nullable Thread thread;

    /** The name the connection sleeps on now (its bell was held when the sleep began), or null. */
    private volatile @Nullable String sleepingOn;

    /**
     * Held by whoever uses the connection: the thread, or a releasing caller that gives its bell back
     * itself when the connection is free (one thread hop less on the way to the waiters).
     */
    private final java.util.concurrent.locks.ReentrantLock wire = new java.util.concurrent.locks.ReentrantLock();

    // Guarded by wire.
    /** The wake-up connection: a release hands the lease only to waiters that publish its id. */
    private final WakeUpConnection connection;
    private final Set<String> held = new HashSet<>();
    private long recheckNanos = TimeUnit.MILLISECONDS.toNanos(1);
    /** When the thread may look at the oldest waiter's bell again (brought forward by a refusal). */
    private volatile long notBefore;

    /** A bell to hold for a grant: given back on that grant's release (or a later one's), or at its expiry. */
    private record Bell(long token, long untilNanos) { }

    /** A bell given to this service's rung {@code waiter}: it passes on unless that waiter is granted first. */
    private record Pass(PgWakeUps.Waiter waiter, long untilNanos) { }

    MariaDbWakeUps(DataSource dataSource, MariaDbLeaseSql sql, LocalPollers pollers, LeaseThreads threads, long safetyPollNanos) {
        this.sql = sql;
        this.pollers = pollers;
        this.spares = new SpareConnections(dataSource, threads, sql.table);
        this.entries = new GrantedEntries(sql);
        // Once it is alive, each waiter looks, and publishes it: a release may hand it the lease from then on.
        this.connection = new WakeUpConnection(spares, sql.table, pollers::wakeAll,
                System.getLogger(MariaDbWakeUps.class.getName()));
        this.notBefore = System.nanoTime();
        this.sleepNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(1), Math.min(MAX_SLEEP_NANOS, safetyPollNanos));
    }

    /**
     * A waiting call of {@code name} was refused (or left without a grant): pass the bell on if it was
     * rung with it, and sleep on the bell now if it is the oldest's.
     */
    void refused(String name, PgWakeUps.Waiter waiter) {
        boolean passOn;
        synchronized (this) {
            Pass pass = passing.get(name);
            passOn = pass != null && pass.waiter() == waiter;
            if (passOn) {
                passing.remove(name);
                passOn = !wanted.containsKey(name); // a grant here keeps it
            }
            if (name.equals(pollers.oldestName())) {
                notBefore = System.nanoTime();
            }
        }
        if (passOn) {
            giveBackNow(name);
        }
        synchronized (this) {
            poke();
        }
    }

    /**
     * A waiting call was granted {@code name}: hold its bell until the release (it may hold it
     * already, passed on to it), and leave its queue {@code entry} (if not null) before giving it back.
     */
    synchronized void granted(String name, long token, long ttlMicros, GrantedEntries.@Nullable Leave entry) {
        wanted.put(name, new Bell(token, System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(ttlMicros)));
        passing.remove(name);
        if (entry != null) {
            entries.add(entry);
        }
        poke();
    }

    /** Where entries go that the connection could not leave (its failure, the service closing). */
    void leaveFailuresTo(GrantedEntries.Leaving leaving) {
        entries.elsewhere(leaving);
    }

    /** The grant of {@code name} with {@code token} (any, if null) ended here: give its bell back. */
    void released(String name, @Nullable Long token) {
        synchronized (this) {
            Bell bell = wanted.get(name);
            if (bell == null || (token != null && token < bell.token())) {
                return;
            }
            wanted.remove(name);
        }
        giveBackNow(name);
        synchronized (this) {
            poke();
        }
    }

    /**
     * Gives the bell of {@code name} back on the caller's thread if the connection is free and no
     * entry of the name is still to leave; else the thread will, after leaving the entries.
     */
    private void giveBackNow(String name) {
        if (entries.pendingFor(name)) {
            return;
        }
        if (wire.tryLock()) {
            try {
                if (held.remove(name)) {
                    run(MariaDbLeaseSql.BELL_RELEASE, sql.bellName(name));
                }
            } catch (SQLException | RuntimeException e) {
                held.add(name); // the thread tries again, or finds the connection broken
            } finally {
                wire.unlock();
            }
        }
    }

    /** Whether the connection sleeps on {@code name}'s bell, held by another session: a release rings it. */
    boolean sleepsOn(String name) {
        return name.equals(sleepingOn);
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
                // The session's locks went with it (or go when it is aborted). Said once per outage.
                if (!closed) {
                    connection.reportOutage(e);
                }
                discard();
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

    /** Holds the wanted bells and sleeps for the oldest waiter, until closed. */
    private void serve() throws SQLException {
        while (true) {
            Map<String, Bell> want;
            String target;
            synchronized (this) {
                if (closed) {
                    return;
                }
                long now = System.nanoTime();
                wanted.values().removeIf(b -> now - b.untilNanos() >= 0);
                passing.values().removeIf(p -> now - p.untilNanos() >= 0);
                want = new HashMap<>(wanted);
                for (String name : passing.keySet()) {
                    want.putIfAbsent(name, new Bell(Long.MAX_VALUE, 0)); // kept while its waiter looks
                }
                target = pollers.oldestName();
                changed = false;
            }
            wire.lock();
            long wait;
            try {
                wait = step(want, target);
            } finally {
                wire.unlock();
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

    /** One round on the connection: the bells, then a sleep (-1: look again at once) or how long to wait. */
    private long step(Map<String, Bell> want, @Nullable String target) throws SQLException {
        leaveEntries();
        for (Iterator<String> it = held.iterator(); it.hasNext();) {
            String name = it.next();
            if (!want.containsKey(name)) {
                run(MariaDbLeaseSql.BELL_RELEASE, sql.bellName(name));
                it.remove();
            }
        }
        boolean retry = false;
        for (String name : want.keySet()) {
            if (!held.contains(name)) {
                if (connection.get() == null) {
                    break;
                }
                if (run(MariaDbLeaseSql.BELL_TAKE, sql.bellName(name)) == 1) {
                    held.add(name);
                } else {
                    retry = true; // a sleeper passes it on, or the last holder's release is on its way
                }
            }
        }
        long now = System.nanoTime();
        if (want.isEmpty() && held.isEmpty() && target != null && now - notBefore >= 0 && connection.get() != null) {
            sleep(target);
            return -1;
        }
        setSleepingOn(null);
        if (held.isEmpty() && target == null && want.isEmpty() && connection.isOpen()
                && now - connection.idleSince() >= IDLE_NANOS) {
            giveBack();
        }
        return retry ? TimeUnit.MILLISECONDS.toNanos(1)
                : target != null && want.isEmpty() ? Math.max((spares.notBefore() - notBefore > 0 ? spares.notBefore() : notBefore) - now, 100_000)
                : connection.isOpen() ? IDLE_NANOS : TimeUnit.SECONDS.toNanos(10);
    }

    /** Leaves the queue entries of granted waiters on the connection (without one, elsewhere). Guarded by the wire. */
    private void leaveEntries() throws SQLException {
        if (entries.leave(connection::get)) {
            connection.answered();
        }
    }

    /** One look at {@code name}'s bell, and a sleep on it if another session holds it. */
    private void sleep(String name) throws SQLException {
        String bell = sql.bellName(name);
        if (!connection.isOpen()) {
            return;
        }
        if (run(MariaDbLeaseSql.BELL_HELD, bell) == 0) { // the holder's connection id, never 0

            // Nobody holds it: the holder took the lease without waiting, or has not rung its bell yet.
            setSleepingOn(null);
            notBefore = System.nanoTime() + recheckNanos;
            recheckNanos = Math.min(MAX_RECHECK_NANOS, recheckNanos * 2);
            return;
        }
        recheckNanos = TimeUnit.MILLISECONDS.toNanos(1);
        setSleepingOn(name);
        MariaDbHandOff.Woken woken = connection.sleep(sql, bell, sleepNanos / 1e9, name);
        if (woken == null || !woken.took()) {
            return; // slept the whole bound, or passed the bell on in the statement (another's grant): sleep again
        }
        held.add(name);
        setSleepingOn(null);
        // The release that rang handed the lease to a waiter here: it takes the grant without a look. Handed
        // elsewhere (or taken), the bell goes on at once; free, the oldest waiter here looks.
        PgWakeUps.Handed grant = woken.grant();
        PgWakeUps.Waiter handed = grant == null ? null : pollers.find(name, woken.handedTo());
        PgWakeUps.Waiter oldest = woken.live() ? null : pollers.oldest(name);
        synchronized (this) {
            if (wanted.containsKey(name)) {
                // A waiter here was granted meanwhile by a look of its own: the bell is its grant's. Given
                // back, it would go round every other sleeper (each a refused look) and come back reordered.
                return;
            }
            if (handed != null && grant != null) {
                wanted.put(name, new Bell(grant.token(), System.nanoTime()
                        + java.time.Duration.between(grant.acquiredAt(), grant.expiresAt()).toNanos()));
            } else if (oldest != null) {
                passing.put(name, new Pass(oldest, System.nanoTime() + PASS_NANOS));
            }
        }
        if (handed != null && grant != null) {
            handed.hand(grant);
            handed.rung.set(true);
            handed.signal.release();
            return;
        }
        if (oldest == null) {
            held.remove(name); // nobody here takes it: on to the next sleeper
            run(MariaDbLeaseSql.BELL_RELEASE, bell);
            return;
        }
        // Look again only after this turn (a refusal brings it forward).
        notBefore = System.nanoTime() + MAX_RECHECK_NANOS;
        recheckNanos = TimeUnit.MILLISECONDS.toNanos(1);
        oldest.rung.set(true);
        oldest.signal.release();
    }

    /** Sets what the connection sleeps on; the waiters of the name it no longer covers decide their wait again. */
    private void setSleepingOn(@Nullable String name) {
        String before = sleepingOn;
        sleepingOn = name;
        if (before != null && !before.equals(name)) {
            pollers.nudge(before);
        }
    }

    /** Whether the service has its wake-up connection now: else a granted waiter leaves the queue itself. */
    boolean connected() {
        return connection.listener() != null;
    }

    /** The id waiters publish so that a release may hand them the lease, or null. */
    @Nullable Integer listener() {
        return connection.listener();
    }

    /** Runs a one-value statement on the connection with {@code bell}, then {@code more} bound ({@link WakeUpConnection#run}). */
    private long run(String statement, String bell, Object... more) throws SQLException {
        return connection.run(statement, bell, more);
    }

    /** Gives every lock back and the connection to the pool. */
    private void giveBack() throws SQLException {
        connection.giveBack();
        held.clear();
    }

    /** After a failure or at the end: the connection goes back without locks, or is aborted (its session ends). */
    private void discard() {
        setSleepingOn(null);
        pollers.nudge(null);
        wire.lock();
        try {
            if (connection.isOpen()) {
                try {
                    leaveEntries();
                } catch (SQLException | RuntimeException e) {
                    // the connection is broken: handed over below
                }
            }
            entries.handOverAll();
            giveBack();
        } catch (SQLException | RuntimeException e) {
            connection.abort();
            held.clear();
        } finally {
            wire.unlock();
        }
    }

    /** Stops the thread; its connection goes back to the pool without locks. */
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
