package dev.holdfast.testing.contract;

import dev.holdfast.pessimistic.offline.AlreadyLockedException;
import dev.holdfast.pessimistic.offline.ForeignLockException;
import dev.holdfast.pessimistic.offline.LockEndedException;
import dev.holdfast.pessimistic.offline.LockExpiredException;
import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.pessimistic.offline.LockManager;
import dev.holdfast.pessimistic.offline.LockNotHeldException;
import dev.holdfast.pessimistic.offline.Reacquired;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The contract of {@link LockManager}, on every database of the matrix. Extend it and return a fresh
 * manager, on storage no other test uses, whose owner binding is off and whose maximum expiry is at
 * least a minute:
 *
 * <pre>{@code
 * class MyLockManagerTest extends LockManagerContract {
 *     protected LockManager lockManager(TestDatabase db) {
 *         return new MyLockManager(db.dataSource(), db.newTableName("locks"));
 *     }
 * }
 * }</pre>
 *
 * Only the interface is used, so a decorator is proved the same way as an implementation.
 */
public abstract class LockManagerContract {

    private static final String TYPE = "purchase_order";
    private static final Duration LONG = Duration.ofMinutes(1);

    /**
     * A fresh manager whose locks no other test sees. Each test gets its own from here, on each database it runs on.
     *
     * @param db the database the test runs on, with its pool and names for the tables the test creates
     * @return the lock manager under test
     * @throws Exception if it cannot be made; the test fails with it
     */
    protected abstract LockManager lockManager(TestDatabase db) throws Exception;

    @DatabaseTest
    void aLockIsTakenCheckedExtendedAndReleasedAndItsIdThenAuthorizesNothing(TestDatabase db) throws Exception {
        LockManager locks = lockManager(db);
        LockId lockId = locks.tryLock(TYPE, "A-1", "alice", LONG);
        assertThat(LockId.parse(lockId.getValue())).isEqualTo(lockId);
        locks.checkLock(lockId);
        locks.checkLock(lockId, TYPE, "A-1");
        locks.checkLock(lockId, TYPE, "A-1", "alice");
        locks.extendLockExpiration(lockId, "alice", Duration.ofSeconds(30));
        locks.checkLock(lockId, TYPE, "A-1", "alice");

        locks.releaseLock(lockId, "alice");

        assertThatThrownBy(() -> locks.checkLock(lockId)).isInstanceOf(LockNotHeldException.class);
        assertThatThrownBy(() -> locks.checkLock(lockId, TYPE, "A-1", "alice"))
                .isInstanceOf(LockNotHeldException.class);
        assertThatThrownBy(() -> locks.releaseLock(lockId)).isInstanceOf(LockNotHeldException.class);
        assertThatThrownBy(() -> locks.extendLockExpiration(lockId, 60_000)).isInstanceOf(LockNotHeldException.class);
        LockId next = locks.tryLock(TYPE, "A-1", "bob", LONG);
        assertThat(next).isNotEqualTo(lockId);
        locks.checkLock(next, TYPE, "A-1", "bob");
        assertThatThrownBy(() -> locks.checkLock(lockId))
                .as("the old id stays dead")
                .isInstanceOf(LockNotHeldException.class);
    }

    @DatabaseTest
    void aLiveLockRefusesEveryoneWithItsHolderAndExpiryAndStaysTheHolders(TestDatabase db) throws Exception {
        LockManager locks = lockManager(db);
        Instant before = Instant.now().minusSeconds(60);
        LockId alice = locks.tryLock(TYPE, "A-1", "alice", LONG);

        AlreadyLockedException busy =
                catchThrowableOfType(AlreadyLockedException.class, () -> locks.tryLock(TYPE, "A-1", "bob", LONG));
        assertThat(busy).isNotNull();
        assertThat(busy.type()).isEqualTo(TYPE);
        assertThat(busy.id()).isEqualTo("A-1");
        assertThat(busy.owner()).contains("alice");
        assertThat(busy.expiresAt()).isAfter(busy.acquiredAt()).isAfter(before);
        assertThatThrownBy(() -> locks.tryLock(TYPE, "A-1", "alice", LONG))
                .as("the same owner too: a second tab must not share the lock")
                .isInstanceOf(AlreadyLockedException.class);
        assertThatThrownBy(() -> locks.tryLock(TYPE, "A-1")).isInstanceOf(AlreadyLockedException.class);

        locks.checkLock(alice, TYPE, "A-1", "alice");
        LockId other = locks.tryLock(TYPE, "A-2", "bob", LONG);
        locks.checkLock(other, TYPE, "A-2", "bob");
    }

    @DatabaseTest
    void aLockIdAuthorizesOnlyItsOwnResourceAndOwner(TestDatabase db) throws Exception {
        LockManager locks = lockManager(db);
        LockId alice = locks.tryLock(TYPE, "A-1", "alice", LONG);
        locks.tryLock(TYPE, "A-2", "bob", LONG);

        ForeignLockException otherResource =
                catchThrowableOfType(ForeignLockException.class, () -> locks.checkLock(alice, TYPE, "A-2"));
        assertThat(otherResource.reason()).isEqualTo(ForeignLockException.Reason.OTHER_RESOURCE);
        assertThatThrownBy(() -> locks.checkLock(alice, "invoice", "A-1")).isInstanceOf(ForeignLockException.class);
        ForeignLockException otherOwner =
                catchThrowableOfType(ForeignLockException.class, () -> locks.checkLock(alice, TYPE, "A-1", "bob"));
        assertThat(otherOwner.reason()).isEqualTo(ForeignLockException.Reason.OTHER_OWNER);
        assertThatThrownBy(() -> locks.releaseLock(alice, "bob")).isInstanceOf(LockNotHeldException.class);
        assertThatThrownBy(() -> locks.extendLockExpiration(alice, "bob", Duration.ofSeconds(5)))
                .isInstanceOf(LockNotHeldException.class);

        locks.checkLock(alice, TYPE, "A-1", "alice");
        assertThatThrownBy(() -> locks.tryLock(TYPE, "A-1", "carol", LONG)).isInstanceOf(AlreadyLockedException.class);
    }

    @DatabaseTest
    void anExpiredLockAuthorizesNothingIsNeverRevivedAndIsFreeForOthers(TestDatabase db) throws Exception {
        LockManager locks = lockManager(db);
        LockId lockId = locks.tryLock(TYPE, "A-1", "alice", Duration.ofMillis(300));
        awaitExpiry(() -> {
            locks.checkLock(lockId);
            return null;
        });

        assertThatThrownBy(() -> locks.checkLock(lockId, TYPE, "A-1", "alice"))
                .isInstanceOf(LockExpiredException.class);
        assertThatThrownBy(() -> locks.extendLockExpiration(lockId, "alice", LONG))
                .isInstanceOf(LockNotHeldException.class);
        assertThatThrownBy(() -> locks.checkLock(lockId))
                .as("an extension never revives it")
                .isInstanceOf(LockNotHeldException.class);
        LockId bob = locks.tryLock(TYPE, "A-1", "bob", LONG);
        locks.checkLock(bob, TYPE, "A-1", "bob");
        assertThatThrownBy(() -> locks.releaseLock(lockId, "alice")).isInstanceOf(LockNotHeldException.class);
        locks.checkLock(bob, TYPE, "A-1", "bob");
    }

    @DatabaseTest
    void anExtensionKeepsALockAlivePastItsFirstExpiry(TestDatabase db) throws Exception {
        LockManager locks = lockManager(db);
        LockId lockId = locks.tryLock(TYPE, "A-1", "alice", Duration.ofMillis(600));
        locks.extendLockExpiration(lockId, "alice", Duration.ofSeconds(30));
        Thread.sleep(900);
        locks.checkLock(lockId, TYPE, "A-1", "alice");
        assertThatThrownBy(() -> locks.tryLock(TYPE, "A-1", "bob", LONG)).isInstanceOf(AlreadyLockedException.class);
    }

    @DatabaseTest
    void badInputIsATypedErrorAndTakesNoLock(TestDatabase db) throws Exception {
        LockManager locks = lockManager(db);
        List<Runnable> bad = List.of(
                () -> locks.tryLock(" ", "A-1", "alice", LONG),
                () -> locks.tryLock(TYPE, "", "alice", LONG),
                () -> locks.tryLock(TYPE, "A-1", "", LONG),
                () -> locks.tryLock("x".repeat(LockManager.MAX_TYPE_LENGTH + 1), "A-1", "alice", LONG),
                () -> locks.tryLock(TYPE, "x".repeat(LockManager.MAX_ID_LENGTH + 1), "alice", LONG),
                () -> locks.tryLock(TYPE, "A-1", "x".repeat(LockManager.MAX_OWNER_LENGTH + 1), LONG),
                () -> locks.tryLock(TYPE, "A-1\u0000", "alice", LONG),
                () -> locks.tryLock(TYPE, "A-1", "alice", Duration.ZERO),
                () -> locks.tryLock(TYPE, "A-1", "alice", Duration.ofMillis(-1)));
        for (Runnable call : bad) {
            assertThatThrownBy(call::run).isInstanceOf(IllegalArgumentException.class);
        }
        assertThatThrownBy(() -> LockId.parse("not a lock id")).isInstanceOf(IllegalArgumentException.class);

        LockId taken = locks.tryLock(TYPE, "A-1", "alice", LONG);
        assertThatThrownBy(() -> locks.extendLockExpiration(taken, "alice", Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
        locks.checkLock(taken, TYPE, "A-1", "alice");
    }

    @DatabaseTest
    void concurrentCallersForOneResourceGetExactlyOneLock(TestDatabase db) throws Exception {
        LockManager locks = lockManager(db);
        for (int round = 0; round < 10; round++) {
            String id = "R-" + round;
            List<LockId> granted = Race.run(8, i -> () -> {
                        try {
                            return locks.tryLock(TYPE, id, "user-" + i, LONG);
                        } catch (AlreadyLockedException refused) {
                            return null;
                        }
                    })
                    .stream()
                    .filter(java.util.Objects::nonNull)
                    .toList();
            assertThat(granted).as("round %d", round).hasSize(1);
            locks.checkLock(granted.get(0), TYPE, id);
        }
    }

    @DatabaseTest
    void theOwnerReacquiringGetsAFreshIdAndTheOldOneAuthorizesNothing(TestDatabase db) throws Exception {
        LockManager locks = lockManager(db);
        Reacquired first = locks.reacquire(TYPE, "A-1", "alice", LONG);
        assertThat(first.replaced()).as("a free lock is simply taken").isFalse();

        Reacquired second = locks.reacquire(TYPE, "A-1", "alice", LONG); // the page reloaded, or a second tab

        assertThat(second.replaced()).isTrue();
        assertThat(second.lockId()).isNotEqualTo(first.lockId());
        locks.checkLock(second.lockId(), TYPE, "A-1", "alice");
        assertThatThrownBy(() -> locks.checkLock(first.lockId(), TYPE, "A-1", "alice"))
                .isInstanceOf(LockNotHeldException.class);
        assertThatThrownBy(() -> locks.releaseLock(first.lockId(), "alice")).isInstanceOf(LockNotHeldException.class);
        assertThatThrownBy(() -> locks.extendLockExpiration(first.lockId(), "alice", LONG))
                .isInstanceOf(LockNotHeldException.class);
        locks.checkLock(second.lockId(), TYPE, "A-1", "alice");

        AlreadyLockedException other =
                catchThrowableOfType(AlreadyLockedException.class, () -> locks.reacquire(TYPE, "A-1", "bob", LONG));
        assertThat(other.owner()).contains("alice");
        assertThatThrownBy(() -> locks.tryLock(TYPE, "A-1", "alice", LONG))
                .as("tryLock keeps refusing the owner's own live lock")
                .isInstanceOf(AlreadyLockedException.class);
        locks.checkLock(second.lockId(), TYPE, "A-1", "alice");

        locks.releaseLock(second.lockId(), "alice");
        assertThat(locks.reacquire(TYPE, "A-1", "bob", LONG).replaced()).isFalse();
    }

    @DatabaseTest
    void tabsOfOneOwnerRacingToReacquireLeaveExactlyOneLiveId(TestDatabase db) throws Exception {
        LockManager locks = lockManager(db);
        for (int round = 0; round < 10; round++) {
            String id = "T-" + round;
            locks.reacquire(TYPE, id, "alice", LONG);
            List<LockId> ids = Race.run(
                    8, tab -> () -> locks.reacquire(TYPE, id, "alice", LONG).lockId());
            int live = 0;
            for (LockId lockId : ids) { // all tabs are done: only the last replacement may be live
                try {
                    locks.checkLock(lockId, TYPE, id, "alice");
                    live++;
                } catch (LockNotHeldException stale) {
                    // replaced by a later tab
                }
            }
            assertThat(live).as("round %d", round).isEqualTo(1);
        }
    }

    @DatabaseTest
    void aRefusedIdIsToldHowItsLockEndedByWhomWhenAndWhoHoldsItNow(TestDatabase db) throws Exception {
        LockManager locks = lockManager(db);
        Instant before = Instant.now().minusSeconds(5); // database and test clocks may differ a little

        // released by its owner; then someone else takes the resource
        LockId released = locks.tryLock(TYPE, "E-1", "alice", LONG);
        locks.releaseLock(released, "alice");
        LockEndedException e =
                catchThrowableOfType(LockEndedException.class, () -> locks.checkLock(released, TYPE, "E-1", "alice"));
        assertThat(e.reason()).isEqualTo(LockEndedException.Reason.RELEASED);
        assertThat(e.endedBy()).contains("alice");
        assertThat(e.endedAt()).isAfter(before);
        assertThat(e.holder()).isEmpty();
        assertThat(e.type()).isEqualTo(TYPE);
        assertThat(e.id()).isEqualTo("E-1");
        LockId bobs = locks.tryLock(TYPE, "E-1", "bob", LONG);
        e = catchThrowableOfType(LockEndedException.class, () -> locks.releaseLock(released, "alice"));
        assertThat(e.reason()).isEqualTo(LockEndedException.Reason.RELEASED);
        assertThat(e.holder()).hasValueSatisfying(h -> assertThat(h.owner()).isEqualTo("bob"));
        assertThat(e.getMessage()).contains("released by alice").contains("now held by bob");
        locks.checkLock(bobs, TYPE, "E-1", "bob");

        // replaced by the owner's re-acquire (another tab)
        Reacquired first = locks.reacquire(TYPE, "E-2", "alice", LONG);
        Reacquired second = locks.reacquire(TYPE, "E-2", "alice", LONG);
        e = catchThrowableOfType(
                LockEndedException.class, () -> locks.extendLockExpiration(first.lockId(), "alice", LONG));
        assertThat(e.reason()).isEqualTo(LockEndedException.Reason.REPLACED);
        assertThat(e.endedBy()).contains("alice");
        assertThat(e.holder()).hasValueSatisfying(h -> assertThat(h.owner()).isEqualTo("alice"));
        locks.checkLock(second.lockId(), TYPE, "E-2", "alice");

        // expired, then taken over by bob
        LockId expired = locks.tryLock(TYPE, "E-3", "alice", Duration.ofMillis(300));
        awaitExpiry(() -> {
            locks.checkLock(expired);
            return null;
        });
        LockExpiredException notYetTaken =
                catchThrowableOfType(LockExpiredException.class, () -> locks.checkLock(expired));
        LockId taker = locks.tryLock(TYPE, "E-3", "bob", LONG);
        e = catchThrowableOfType(LockEndedException.class, () -> locks.checkLock(expired, TYPE, "E-3", "alice"));
        assertThat(e.reason()).isEqualTo(LockEndedException.Reason.EXPIRED);
        assertThat(e.endedBy()).isEmpty();
        assertThat(e.endedAt()).isEqualTo(notYetTaken.expiredAt());
        assertThat(e.holder()).hasValueSatisfying(h -> {
            assertThat(h.owner()).isEqualTo("bob");
            assertThat(h.acquiredAt()).isAfterOrEqualTo(notYetTaken.expiredAt());
        });
        locks.checkLock(taker, TYPE, "E-3", "bob");

        // an ended id presented by someone else, or for something else: foreign, as a live one would be
        assertThat(catchThrowableOfType(ForeignLockException.class, () -> locks.checkLock(released, TYPE, "E-1", "bob"))
                        .reason())
                .isEqualTo(ForeignLockException.Reason.OTHER_OWNER);
        assertThat(catchThrowableOfType(
                                ForeignLockException.class, () -> locks.checkLock(released, TYPE, "E-2", "alice"))
                        .reason())
                .isEqualTo(ForeignLockException.Reason.OTHER_RESOURCE);

        // only the latest end of a resource is remembered; a never-issued id is not an ended one
        locks.releaseLock(bobs, "bob");
        assertThat(catchThrowableOfType(LockNotHeldException.class, () -> locks.checkLock(released)))
                .isNotInstanceOf(LockEndedException.class);
        assertThat(catchThrowableOfType(LockEndedException.class, () -> locks.checkLock(bobs))
                        .endedBy())
                .contains("bob");
        assertThat(catchThrowableOfType(
                        LockNotHeldException.class, () -> locks.checkLock(LockId.parse("AAAAAAAAAAAAAAAAAAAAAA"))))
                .isNotInstanceOf(LockEndedException.class);
    }

    /** Calls {@code check} until it fails with {@link LockExpiredException} (at most 10 s). */
    private static void awaitExpiry(Callable<Void> check) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            try {
                check.call();
            } catch (LockExpiredException expired) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("the lock never expired");
    }
}
