package dev.holdfast.pessimistic.offline;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.PgReplicaPair;
import dev.holdfast.jdbc.CommitDurability;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Offline locks across a real PostgreSQL failover with a synchronous standby
 * ({@code scripts/pg-replica.sh up sync}; the manager reaches the pair through the multi-host URL
 * {@code HOLDFAST_REPLICA_URL} and is not rebuilt). One thread takes 41 locks and releases every
 * other one with a {@code DURABLE} manager, then does the same with a {@code RELAXED} manager on a
 * second table, and the primary is stopped hard right after the last call returned; then the
 * standby is promoted.
 *
 * <p>What must survive: with {@code DURABLE} every acquire and release (each commit waited for the
 * synchronous standby). With {@code RELAXED} ({@code synchronous_commit = off} for {@code tryLock}
 * and {@code releaseLock}: the commit waits neither for the disk nor for the standby) the new
 * primary may lack the last operations, but only a suffix of them: WAL is shipped in order, so if an
 * operation survived, every earlier one did. A lost acquire shows as {@link LockNotHeldException} on
 * {@code checkLock} (the edit is refused, nobody is authorized twice); a lost release as the old
 * owner's lock still live until it expires.
 */
@ExtendWith(PgReplicaPair.Exclusive.class)
class OfflineLockFailoverTest {

    private static final int LOCKS = 41; // odd: the last operation is an acquire, so a lost tail is never ambiguous

    sealed interface Op permits Acquire, Release {}

    record Acquire(String id, LockId lockId) implements Op {}

    record Release(String id) implements Op {}

    @AfterAll
    static void removePair() {
        if (PgReplicaPair.scriptPresent()) {
            PgReplicaPair.script("down");
        }
    }

    @Test
    void durableLosesNothingRelaxedLosesAtMostTheLastOperations() throws Exception {
        PgReplicaPair.script("up", "sync");
        try (HikariDataSource pool = pool()) {
            new SchemaInstaller(pool).install(HoldfastTable.OFFLINE_LOCKS, "locks_durable");
            new SchemaInstaller(pool).install(HoldfastTable.OFFLINE_LOCKS, "locks_relaxed");
            JdbcLockManager durable = JdbcLockManager.builder(pool)
                    .table("locks_durable")
                    .durability(CommitDurability.DURABLE)
                    .ownerBinding(true)
                    .build();
            JdbcLockManager relaxed = JdbcLockManager.builder(pool)
                    .table("locks_relaxed")
                    .durability(CommitDurability.RELAXED)
                    .ownerBinding(true)
                    .build();
            List<Op> durableOps = work(durable);
            List<Op> relaxedOps = work(relaxed);
            PgReplicaPair.script("stop-primary");
            PgReplicaPair.script("promote");
            // Connections to the old primary are dead; the pool skips its liveness check for a
            // connection used within the last 500 ms, so drop them rather than race that window.
            pool.getHikariPoolMXBean().softEvictConnections();

            int durableKept = survivingPrefix(durable, durableOps);
            int relaxedKept = survivingPrefix(relaxed, relaxedOps);
            System.out.printf(
                    "[offline failover, sync standby] DURABLE: %d of %d operations survived;"
                            + " RELAXED: %d of %d survived (a suffix of %d lost)%n",
                    durableKept, durableOps.size(), relaxedKept, relaxedOps.size(), relaxedOps.size() - relaxedKept);
            assertThat(durableKept).as("DURABLE operations that survived").isEqualTo(durableOps.size());
        }
    }

    /** Takes LOCKS locks for "ann" and releases every other one right after taking it. */
    private static List<Op> work(JdbcLockManager locks) {
        List<Op> ops = new ArrayList<>();
        for (int i = 0; i < LOCKS; i++) {
            String id = "order-" + i;
            LockId lockId = locks.tryLock("purchase_order", id, "ann", Duration.ofMinutes(5));
            ops.add(new Acquire(id, lockId));
            if (i % 2 == 1) {
                locks.releaseLock(lockId, "ann");
                ops.add(new Release(id));
            }
        }
        return ops;
    }

    /**
     * How many operations, from the first, the new primary has: observes every resource once (ann's
     * lock id checks, or another user can take the lock, or ann still holds it), then finds the
     * prefix lengths k for which "operations 0..k-1 survived, the rest were lost" predicts exactly
     * these observations. Fails if there is none (what survived is not a prefix); returns the largest.
     */
    private static int survivingPrefix(JdbcLockManager locks, List<Op> ops) {
        List<String> seen = new ArrayList<>(); // per operation index of an Acquire: held / free / lost
        for (int p = 0; p < ops.size(); p++) {
            if (!(ops.get(p) instanceof Acquire a)) {
                seen.add("-");
                continue;
            }
            boolean released = p + 1 < ops.size() && ops.get(p + 1) instanceof Release;
            if (!released) {
                seen.add(checks(locks, a) ? "held" : "lost");
                continue;
            }
            try {
                LockId bob = locks.tryLock("purchase_order", a.id(), "bob", Duration.ofMinutes(5));
                locks.releaseLock(bob, "bob");
                seen.add("free");
            } catch (AlreadyLockedException e) {
                assertThat(e.owner()).contains("ann");
                assertThat(checks(locks, a))
                        .as("a lost release leaves ann's own lock live")
                        .isTrue();
                seen.add("held");
            }
        }
        int best = -1;
        for (int k = 0; k <= ops.size(); k++) {
            boolean consistent = true;
            for (int p = 0; p < ops.size() && consistent; p++) {
                if (!(ops.get(p) instanceof Acquire)) {
                    continue;
                }
                boolean released = p + 1 < ops.size() && ops.get(p + 1) instanceof Release;
                String predicted = !released ? (p < k ? "held" : "lost") : (k == p + 1 ? "held" : "free");
                consistent = predicted.equals(seen.get(p));
            }
            if (consistent) {
                best = k;
            }
        }
        if (best < 0) {
            fail("what survived is not a prefix of the operations: " + seen);
        }
        return best;
    }

    /** True if ann's lock id still checks; false if the acquire was lost (no such lock). */
    private static boolean checks(JdbcLockManager locks, Acquire a) {
        try {
            locks.checkLock(a.lockId(), "purchase_order", a.id(), "ann");
            return true;
        } catch (LockNotHeldException e) {
            return false;
        }
    }

    private static HikariDataSource pool() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(PgReplicaPair.withoutHostCache(PgReplicaPair.url())); // the pair is new: no roles remembered
        config.setUsername("postgres");
        config.setPassword("");
        config.setMaximumPoolSize(2);
        config.setConnectionTimeout(10_000);
        config.setPoolName("offline-failover");
        return new HikariDataSource(config);
    }
}
