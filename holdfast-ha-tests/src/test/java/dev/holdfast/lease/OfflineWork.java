package dev.holdfast.lease;

import dev.holdfast.DatabaseException;
import dev.holdfast.jdbc.CommitDurability;
import dev.holdfast.pessimistic.offline.AlreadyLockedException;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.pessimistic.offline.LockNotHeldException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;

/**
 * Offline lock traffic through a failing-over cluster, and the check of what survived: one thread takes
 * a lock on a new id for "ann" with a {@code DURABLE} manager and releases every other one. An operation
 * that threw a {@link DatabaseException} has no known outcome (the connection may have died after the
 * commit) and is left out of the check, with its id; every acknowledged one must be on the primary after.
 */
final class OfflineWork {

    /** An acknowledged acquire of {@code id}, and whether its release was acknowledged too. */
    private record Acquired(String id, LockId lockId, boolean released) {}

    /** What the check found: acknowledged operations, the ids whose acknowledged state the primary lacks, unknown outcomes. */
    record Check(int acknowledged, List<String> lost, int unknown) {
        @Override
        public String toString() {
            return acknowledged + " acknowledged operations, " + lost.size() + " lost " + lost + ", " + unknown
                    + " with an unknown outcome (the call threw)";
        }
    }

    private final JdbcLockManager locks;
    private final List<Acquired> acquired = new ArrayList<>();
    private int unknown;

    OfflineWork(DataSource dataSource, String table) {
        this.locks = JdbcLockManager.builder(dataSource)
                .table(table)
                .durability(CommitDurability.DURABLE)
                .ownerBinding(true)
                .build();
    }

    /** Runs until {@code stop}; one operation per 20 ms or so. */
    Void run(AtomicBoolean stop) throws InterruptedException {
        for (int i = 0; !stop.get(); i++) {
            String id = "order-" + i;
            LockId lockId;
            try {
                lockId = locks.tryLock("purchase_order", id, "ann", Duration.ofMinutes(10));
            } catch (DatabaseException e) {
                unknown++;
                Thread.sleep(20);
                continue;
            }
            boolean release = i % 2 == 1;
            boolean released = false;
            if (release) {
                try {
                    locks.releaseLock(lockId, "ann");
                    released = true;
                } catch (DatabaseException e) {
                    unknown++;
                    Thread.sleep(20);
                    continue; // neither state of the lock is known: left out
                }
            }
            synchronized (this) {
                acquired.add(new Acquired(id, lockId, released));
            }
            Thread.sleep(20);
        }
        return null;
    }

    /** Looks at every acknowledged operation on the current primary; call after {@link #run} returned. */
    synchronized Check check() {
        List<String> lost = new ArrayList<>();
        int operations = 0;
        for (Acquired a : acquired) {
            operations += a.released() ? 2 : 1;
            if (a.released()) {
                try {
                    LockId bob = locks.tryLock("purchase_order", a.id(), "bob", Duration.ofMinutes(1));
                    locks.releaseLock(bob, "bob");
                } catch (AlreadyLockedException e) {
                    lost.add(a.id() + " (release)");
                }
            } else {
                try {
                    locks.checkLock(a.lockId(), "purchase_order", a.id(), "ann");
                } catch (LockNotHeldException e) {
                    lost.add(a.id() + " (acquire)");
                }
            }
        }
        return new Check(operations, lost, unknown);
    }
}
