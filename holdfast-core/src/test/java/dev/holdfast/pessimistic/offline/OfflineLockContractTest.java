package dev.holdfast.pessimistic.offline;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.jdbc.CommitDurability;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** The contract of {@link LockManager} as {@link JdbcLockManager} keeps it, on every database. */
class OfflineLockContractTest {

    private static final String ORDER = "purchase_order";

    @DatabaseTest
    void aLockIsTakenCheckedAndReleased(TestDatabase db) throws Exception {
        OfflineLockFixture f = OfflineLockFixture.create(db);
        JdbcLockManager locks = f.manager();

        LockId lockId = locks.tryLock(ORDER, "A-1", "alice");
        assertThat(lockId.getValue()).hasSize(LockId.LENGTH);
        assertThat(LockId.parse(lockId.getValue())).isEqualTo(lockId);
        locks.checkLock(lockId);
        locks.checkLock(lockId, ORDER, "A-1");
        locks.checkLock(lockId, ORDER, "A-1", "alice");

        HeldLock held = locks.holder(ORDER, "A-1").orElseThrow();
        assertThat(held.owner()).isEqualTo("alice");
        // The default expiry, computed by the database from its own "now".
        assertThat(Duration.between(held.acquiredAt(), held.expiresAt())).isEqualTo(Duration.ofMinutes(5));
        assertThat(locks.heldLocks(ORDER, null, 10)).containsExactly(held);

        locks.releaseLock(lockId);
        assertThat(locks.holder(ORDER, "A-1")).isEmpty();
        LockNotHeldException released = catchThrowableOfType(LockNotHeldException.class, () -> locks.checkLock(lockId));
        assertThat(released).isNotNull().isExactlyInstanceOf(LockEndedException.class);
        assertThat(((LockEndedException) released).reason()).isEqualTo(LockEndedException.Reason.RELEASED);
        assertThatThrownBy(() -> locks.releaseLock(lockId)).isExactlyInstanceOf(LockEndedException.class);
        assertThatThrownBy(() -> locks.extendLockExpiration(lockId, 60_000))
                .isExactlyInstanceOf(LockEndedException.class);

        // Free again at once, for anyone; the old id stays dead.
        LockId next = locks.tryLock(ORDER, "A-1", "bob");
        assertThat(next).isNotEqualTo(lockId);
        locks.checkLock(next, ORDER, "A-1", "bob");
        assertThatThrownBy(() -> locks.checkLock(lockId))
                .isInstanceOfSatisfying(
                        LockEndedException.class,
                        e -> assertThat(e.holder()).map(HeldLock::owner).contains("bob"));
        // The seed's owner-less form works too.
        LockId anonymous = locks.tryLock(ORDER, "A-2");
        assertThat(locks.holder(ORDER, "A-2").orElseThrow().owner()).isNull();
        locks.releaseLock(anonymous);
    }

    @DatabaseTest
    void aLiveLockIsRefusedWithItsHolderAndExpiryAndNothingChanges(TestDatabase db) throws Exception {
        OfflineLockFixture f = OfflineLockFixture.create(db);
        JdbcLockManager locks = f.manager();
        LockId alice = locks.tryLock(ORDER, "A-1", "alice");
        HeldLock held = locks.holder(ORDER, "A-1").orElseThrow();
        List<String> before = f.snapshot();

        AlreadyLockedException e =
                catchThrowableOfType(AlreadyLockedException.class, () -> locks.tryLock(ORDER, "A-1", "bob"));
        assertThat(e).isNotNull();
        assertThat(e.owner()).contains("alice");
        assertThat(e.expiresAt()).isEqualTo(held.expiresAt());
        assertThat(e.acquiredAt()).isEqualTo(held.acquiredAt());
        assertThat(e.type()).isEqualTo(ORDER);
        assertThat(e.id()).isEqualTo("A-1");
        assertThat(e).hasMessageContaining("locked by alice until " + held.expiresAt());
        // The same owner in a second tab is refused too, and so is the owner-less form.
        assertThatThrownBy(() -> locks.tryLock(ORDER, "A-1", "alice")).isInstanceOf(AlreadyLockedException.class);
        assertThatThrownBy(() -> locks.tryLock(ORDER, "A-1")).isInstanceOf(AlreadyLockedException.class);
        assertThat(f.snapshot()).isEqualTo(before);
        locks.checkLock(alice, ORDER, "A-1", "alice");
    }

    @DatabaseTest
    void aLockIdForOneResourceNeverAuthorizesAnother(TestDatabase db) throws Exception {
        OfflineLockFixture f = OfflineLockFixture.create(db);
        JdbcLockManager locks = f.manager();
        LockId forA = locks.tryLock(ORDER, "A", "alice");
        LockId forB = locks.tryLock(ORDER, "B", "alice");
        List<String> before = f.snapshot();

        ForeignLockException other =
                catchThrowableOfType(ForeignLockException.class, () -> locks.checkLock(forA, ORDER, "B"));
        assertThat(other).isNotNull().isInstanceOf(LockNotHeldException.class);
        assertThat(other.reason()).isEqualTo(ForeignLockException.Reason.OTHER_RESOURCE);
        assertThat(other).hasMessageContaining(ORDER + " B").hasMessageNotContaining(forA.getValue());
        assertThatThrownBy(() -> locks.checkLock(forA, ORDER, "B", "alice")).isInstanceOf(ForeignLockException.class);
        assertThatThrownBy(() -> locks.checkLock(forA, "invoice", "A")).isInstanceOf(ForeignLockException.class);
        assertThatThrownBy(() -> locks.checkLock(forA, ORDER, "a"))
                .as("case matters")
                .isInstanceOf(ForeignLockException.class);
        assertThatThrownBy(() -> locks.checkLock(forA, ORDER, "A "))
                .as("trailing space matters")
                .isInstanceOf(ForeignLockException.class);
        locks.checkLock(forB, ORDER, "B");
        assertThat(f.snapshot()).isEqualTo(before);
    }

    @DatabaseTest
    void withOwnerBindingOneUsersLockIdNeverAuthorizesAnother(TestDatabase db) throws Exception {
        OfflineLockFixture f = OfflineLockFixture.create(db);
        JdbcLockManager locks = f.manager(b -> b.ownerBinding(true));
        LockId u1 = locks.tryLock(ORDER, "A", "U1");
        List<String> before = f.snapshot();

        ForeignLockException e =
                catchThrowableOfType(ForeignLockException.class, () -> locks.checkLock(u1, ORDER, "A", "U2"));
        assertThat(e).isNotNull();
        assertThat(e.reason()).isEqualTo(ForeignLockException.Reason.OTHER_OWNER);
        assertThatThrownBy(() -> locks.releaseLock(u1, "U2")).isInstanceOf(ForeignLockException.class);
        assertThatThrownBy(() -> locks.extendLockExpiration(u1, "U2", Duration.ofMinutes(1)))
                .isInstanceOf(ForeignLockException.class);
        assertThatThrownBy(() -> locks.checkLock(u1, ORDER, "A", "u1"))
                .as("case matters")
                .isInstanceOf(ForeignLockException.class);
        // The owner-less forms cannot be used by mistake.
        assertThatThrownBy(() -> locks.checkLock(u1)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> locks.checkLock(u1, ORDER, "A")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> locks.releaseLock(u1)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> locks.extendLockExpiration(u1, 1000)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> locks.extendLockExpiration(u1, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> locks.tryLock(ORDER, "B")).isInstanceOf(IllegalStateException.class);
        assertThat(f.snapshot()).isEqualTo(before);

        locks.checkLock(u1, ORDER, "A", "U1");
        locks.releaseLock(u1, "U1");
        assertThat(f.count("lock_id IS NOT NULL")).isZero();
    }

    @DatabaseTest
    void anExplicitOwnerIsCheckedEvenWithoutBinding(TestDatabase db) throws Exception {
        OfflineLockFixture f = OfflineLockFixture.create(db);
        JdbcLockManager locks = f.manager();
        LockId anonymous = locks.tryLock(ORDER, "A");
        assertThatThrownBy(() -> locks.checkLock(anonymous, ORDER, "A", "U2")).isInstanceOf(ForeignLockException.class);
        LockId u1 = locks.tryLock(ORDER, "B", "U1");
        assertThatThrownBy(() -> locks.releaseLock(u1, "U2")).isInstanceOf(ForeignLockException.class);
        locks.checkLock(u1);
    }

    @DatabaseTest
    void expiryIsDecidedByDatabaseTimeAndAnExpiredLockAuthorizesNothing(TestDatabase db) throws Exception {
        OfflineLockFixture f = OfflineLockFixture.create(db);
        JdbcLockManager locks = f.manager();
        LockId lockId = locks.tryLock(ORDER, "A", "alice", Duration.ofSeconds(3));
        locks.checkLock(lockId, ORDER, "A", "alice");
        Instant expiresAt = f.expiresAt(ORDER, "A");

        f.awaitDbTimePast(expiresAt);
        List<String> expired = f.snapshot();
        LockExpiredException e = catchThrowableOfType(LockExpiredException.class, () -> locks.checkLock(lockId));
        assertThat(e).isNotNull();
        assertThat(e.expiredAt()).isEqualTo(expiresAt);
        assertThat(e.type()).isEqualTo(ORDER);
        assertThatThrownBy(() -> locks.checkLock(lockId, ORDER, "A", "alice")).isInstanceOf(LockExpiredException.class);
        assertThatThrownBy(() -> locks.extendLockExpiration(lockId, "alice", Duration.ofMinutes(5)))
                .as("an expired lock is never revived")
                .isInstanceOf(LockExpiredException.class);
        assertThatThrownBy(() -> locks.extendLockExpiration(lockId, 60_000)).isInstanceOf(LockExpiredException.class);
        assertThatThrownBy(() -> locks.releaseLock(lockId)).isInstanceOf(LockExpiredException.class);
        assertThat(f.snapshot()).isEqualTo(expired);
        assertThat(locks.holder(ORDER, "A")).isEmpty();
        assertThat(locks.heldLocks(null, null, 10)).isEmpty();

        // Someone else takes it over in place; the old id is then told it expired and who holds it now.
        LockId bob = locks.tryLock(ORDER, "A", "bob");
        locks.checkLock(bob, ORDER, "A", "bob");
        assertThatThrownBy(() -> locks.checkLock(lockId)).isInstanceOfSatisfying(LockEndedException.class, ended -> {
            assertThat(ended.reason()).isEqualTo(LockEndedException.Reason.EXPIRED);
            assertThat(ended.holder()).map(HeldLock::owner).contains("bob");
        });
        assertThat(f.count("")).isEqualTo(1);
    }

    @DatabaseTest
    void extensionAddsToTheExpiryAndIsCapped(TestDatabase db) throws Exception {
        OfflineLockFixture f = OfflineLockFixture.create(db);
        JdbcLockManager locks = f.manager(b -> b.maxExpiry(Duration.ofMinutes(10)));
        LockId lockId = locks.tryLock(ORDER, "A", "alice");
        Instant first = f.expiresAt(ORDER, "A");

        locks.extendLockExpiration(lockId, 60_000);
        assertThat(f.expiresAt(ORDER, "A")).isEqualTo(first.plus(Duration.ofMinutes(1)));
        locks.extendLockExpiration(lockId, "alice", Duration.ofSeconds(30));
        assertThat(f.expiresAt(ORDER, "A")).isEqualTo(first.plus(Duration.ofSeconds(90)));

        // 6.5 + 9 minutes would exceed the 10-minute maximum from now: capped.
        locks.extendLockExpiration(lockId, Duration.ofMinutes(9));
        Instant capped = f.expiresAt(ORDER, "A");
        Instant now = f.dbNow();
        assertThat(capped).isBefore(now.plus(Duration.ofMinutes(10)).plusMillis(1));
        assertThat(capped).isAfter(first.plus(Duration.ofSeconds(90)));
        locks.checkLock(lockId, ORDER, "A", "alice");
    }

    @DatabaseTest
    void badInputIsRefusedBeforeAnySqlAndChangesNothing(TestDatabase db) throws Exception {
        OfflineLockFixture f = OfflineLockFixture.create(db);
        JdbcLockManager locks = f.manager();
        LockId held = locks.tryLock(ORDER, "A", "alice");
        List<String> before = f.snapshot();
        String longType = "t".repeat(LockManager.MAX_TYPE_LENGTH + 1);
        String longId = "i".repeat(LockManager.MAX_ID_LENGTH + 1);
        String longOwner = "o".repeat(LockManager.MAX_OWNER_LENGTH + 1);

        Map<String, Runnable> bad = new LinkedHashMap<>();
        bad.put("null type", () -> locks.tryLock(null, "B", "bob"));
        bad.put("blank type", () -> locks.tryLock("  ", "B", "bob"));
        bad.put("oversize type", () -> locks.tryLock(longType, "B", "bob"));
        bad.put("null id", () -> locks.tryLock(ORDER, null, "bob"));
        bad.put("empty id", () -> locks.tryLock(ORDER, "", "bob"));
        bad.put("oversize id", () -> locks.tryLock(ORDER, longId, "bob"));
        bad.put("control character", () -> locks.tryLock(ORDER, "B\u0000", "bob"));
        bad.put("newline", () -> locks.tryLock(ORDER, "B\nC", "bob"));
        bad.put("unpaired surrogate", () -> locks.tryLock(ORDER, "B\uD800", "bob"));
        bad.put("null owner", () -> locks.tryLock(ORDER, "B", (String) null));
        bad.put("oversize owner", () -> locks.tryLock(ORDER, "B", longOwner));
        bad.put("zero expiry", () -> locks.tryLock(ORDER, "B", "bob", Duration.ZERO));
        bad.put("negative expiry", () -> locks.tryLock(ORDER, "B", "bob", Duration.ofMinutes(-5)));
        bad.put("absurd expiry", () -> locks.tryLock(ORDER, "B", "bob", Duration.ofDays(3650)));
        bad.put("null expiry", () -> locks.tryLock(ORDER, "B", "bob", null));
        bad.put("negative extension", () -> locks.extendLockExpiration(held, -1000));
        bad.put("zero extension", () -> locks.extendLockExpiration(held, 0));
        bad.put("absurd extension", () -> locks.extendLockExpiration(held, Long.MAX_VALUE));
        bad.put("absurd extension (Duration)", () -> locks.extendLockExpiration(held, "alice", Duration.ofDays(400)));
        bad.put("null lock id", () -> locks.checkLock(null));
        bad.put("null lock id (release)", () -> locks.releaseLock(null, "alice"));
        bad.put("check with blank id", () -> locks.checkLock(held, ORDER, " "));
        bad.put("heldLocks limit", () -> locks.heldLocks(null, null, 0));
        bad.put("purge size", () -> locks.purgeExpired(0));
        bad.put("malformed lock id", () -> LockId.parse("not-a-lock-id"));
        bad.put("lock id with a quote", () -> LockId.parse("AAAAAAAAAAAAAAAAAAAA'A"));
        bad.put("non-canonical lock id", () -> LockId.parse(held.getValue().substring(0, 21) + "B"));
        for (Map.Entry<String, Runnable> call : bad.entrySet()) {
            assertThatThrownBy(call.getValue()::run).as(call.getKey()).isInstanceOf(IllegalArgumentException.class);
        }
        assertThatThrownBy(() -> LockId.parse("x")).isInstanceOf(MalformedLockIdException.class);

        // Well-formed but forged: the database is asked, and says no.
        LockId forged = LockId.parse("AAAAAAAAAAAAAAAAAAAAAA");
        assertThatThrownBy(() -> locks.checkLock(forged)).isExactlyInstanceOf(LockNotHeldException.class);
        assertThatThrownBy(() -> locks.checkLock(forged, ORDER, "A", "alice"))
                .isExactlyInstanceOf(LockNotHeldException.class);
        assertThatThrownBy(() -> locks.releaseLock(forged)).isExactlyInstanceOf(LockNotHeldException.class);
        assertThatThrownBy(() -> locks.extendLockExpiration(forged, 1000))
                .isExactlyInstanceOf(LockNotHeldException.class);
        assertThat(f.snapshot()).isEqualTo(before);
        locks.checkLock(held, ORDER, "A", "alice");
    }

    @DatabaseTest
    void limitsAreCharactersNotBytes(TestDatabase db) throws Exception {
        OfflineLockFixture f = OfflineLockFixture.create(db);
        JdbcLockManager locks = f.manager();
        String type = "\uD83D\uDD12".repeat(LockManager.MAX_TYPE_LENGTH); // 100 padlocks, 4 bytes each in UTF-8
        String id = "ü".repeat(LockManager.MAX_ID_LENGTH);
        String owner = "Zoë " + "\u6F22".repeat(LockManager.MAX_OWNER_LENGTH - 4);
        LockId lockId = locks.tryLock(type, id, owner);
        locks.checkLock(lockId, type, id, owner);
        assertThat(locks.holder(type, id).orElseThrow().owner()).isEqualTo(owner);
        assertThatThrownBy(() -> locks.tryLock(type + "x", id, owner)).isInstanceOf(IllegalArgumentException.class);
    }

    @DatabaseTest
    void locksCommitIndependentlyOfTheCallersTransaction(TestDatabase db) throws Exception {
        OfflineLockFixture f = OfflineLockFixture.create(db);
        // A pool whose connections come with autocommit off, as in a Spring application.
        try (HikariDataSource pool = db.newPool(2)) {
            DataSource manual = autocommitOff(pool);
            JdbcLockManager locks = f.manager(manual, b -> b);
            try (Connection business = pool.getConnection()) {
                business.setAutoCommit(false);
                try (Statement s = business.createStatement()) {
                    s.executeUpdate("UPDATE " + f.table + " SET lock_owner = 'nobody' WHERE 1 = 0");
                }
                LockId lockId = locks.tryLock(ORDER, "A", "alice");
                business.rollback();
                business.setAutoCommit(true);
                // Seen at once through another pool, and not undone by the rollback.
                assertThat(f.manager().holder(ORDER, "A")).isPresent();
                locks.checkLock(lockId);
                locks.releaseLock(lockId);
                assertThat(f.manager().holder(ORDER, "A")).isEmpty();
            }
            try (Connection c = manual.getConnection()) {
                assertThat(c.getAutoCommit()).as("handed back as it came").isFalse();
                c.rollback();
            }
            assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isZero();
        }
    }

    @DatabaseTest
    void noConnectionLeaksOnAnyPath(TestDatabase db) throws Exception {
        OfflineLockFixture f = OfflineLockFixture.create(db);
        try (HikariDataSource pool = db.newPool(2)) {
            JdbcLockManager locks = f.manager(pool, b -> b);
            LockId forged = LockId.parse("AAAAAAAAAAAAAAAAAAAAAA");
            for (int i = 0; i < 30; i++) {
                LockId lockId = locks.tryLock(ORDER, "A", "alice");
                assertThatThrownBy(() -> locks.tryLock(ORDER, "A", "bob")).isInstanceOf(AlreadyLockedException.class);
                assertThatThrownBy(() -> locks.checkLock(lockId, ORDER, "B")).isInstanceOf(ForeignLockException.class);
                assertThatThrownBy(() -> locks.releaseLock(forged)).isInstanceOf(LockNotHeldException.class);
                locks.extendLockExpiration(lockId, 10);
                locks.releaseLock(lockId);
            }
            JdbcLockManager broken = JdbcLockManager.builder(pool)
                    .table("holdfast_no_such_table")
                    .build();
            assertThatThrownBy(() -> broken.tryLock(ORDER, "A")).isInstanceOf(dev.holdfast.DatabaseException.class);
            assertThatThrownBy(() -> broken.checkLock(forged)).isInstanceOf(dev.holdfast.DatabaseException.class);
            assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isZero();
        }
    }

    @DatabaseTest
    void operatorsListForceReleaseAndPurgeInBoundedBatches(TestDatabase db) throws Exception {
        OfflineLockFixture f = OfflineLockFixture.create(db);
        JdbcLockManager locks = f.manager();
        LockId a = locks.tryLock(ORDER, "A", "alice");
        LockId b = locks.tryLock(ORDER, "B", "bob");
        locks.tryLock("invoice", "I-1", "alice");
        LockId released = locks.tryLock(ORDER, "C", "carol");
        locks.releaseLock(released);
        f.addExpiredRows("stale", "s", 25);

        assertThat(locks.heldLocks(null, null, 100))
                .extracting(HeldLock::id)
                .containsExactlyInAnyOrder("A", "B", "I-1");
        assertThat(locks.heldLocks(ORDER, null, 100)).extracting(HeldLock::id).containsExactlyInAnyOrder("A", "B");
        assertThat(locks.heldLocks(null, "alice", 100)).extracting(HeldLock::id).containsExactlyInAnyOrder("A", "I-1");
        assertThat(locks.heldLocks(ORDER, "alice", 100))
                .extracting(HeldLock::id)
                .containsExactly("A");
        assertThat(locks.heldLocks(null, null, 2)).hasSize(2);

        assertThat(locks.forceRelease(ORDER, "A")).isTrue();
        assertThat(locks.forceRelease(ORDER, "A")).isFalse();
        assertThat(locks.forceRelease(ORDER, "nothing")).isFalse();
        assertThatThrownBy(() -> locks.checkLock(a)).isInstanceOfSatisfying(LockEndedException.class, e -> {
            assertThat(e.reason()).isEqualTo(LockEndedException.Reason.BROKEN);
            assertThat(e.endedBy()).isEmpty();
            assertThat(e.getMessage()).contains("broken by an operator");
        });
        // an operator who names themselves is named to the lock's owner
        assertThat(locks.forceRelease(ORDER, "B", "root")).isTrue();
        assertThatThrownBy(() -> locks.checkLock(b, ORDER, "B", "bob"))
                .isInstanceOfSatisfying(LockEndedException.class, e -> {
                    assertThat(e.reason()).isEqualTo(LockEndedException.Reason.BROKEN);
                    assertThat(e.endedBy()).contains("root");
                    assertThat(e.holder()).isEmpty();
                });
        assertThatThrownBy(() -> locks.forceRelease(ORDER, "B", " ")).isInstanceOf(IllegalArgumentException.class);
        locks.tryLock(ORDER, "B", "bob");

        // 25 stale + released C + force-released A = 27 rows to purge, in batches of at most 10.
        assertThat(locks.purgeExpired(10)).isEqualTo(10);
        assertThat(locks.purgeExpired(10)).isEqualTo(10);
        assertThat(locks.purgeExpired(10)).isEqualTo(7);
        assertThat(locks.purgeExpired(10)).isZero();
        assertThat(f.count("")).isEqualTo(2);
        assertThat(locks.heldLocks(null, null, 100)).extracting(HeldLock::id).containsExactlyInAnyOrder("B", "I-1");
        f.addExpiredRows("stale", "t", 12);
        assertThat(locks.purgeAllExpired(5)).isEqualTo(12);
    }

    @DatabaseTest
    void aLostAcquireIsCaughtAtSubmitAndALostReleaseOnlyDelaysTheNextEditor(TestDatabase db) throws Exception {
        // What an asynchronous commit can lose in a crash, simulated by undoing it in the table.
        OfflineLockFixture f = OfflineLockFixture.create(db);
        JdbcLockManager locks = f.manager(b -> b.durability(CommitDurability.RELAXED));
        LockId lost = locks.tryLock(ORDER, "A", "alice");
        db.execute("DELETE FROM " + f.table + " WHERE lock_type = ? AND resource_id = ?", ORDER, "A");
        assertThatThrownBy(() -> locks.checkLock(lost, ORDER, "A", "alice")).isInstanceOf(LockNotHeldException.class);
        LockId bob = locks.tryLock(ORDER, "A", "bob");
        assertThatThrownBy(() -> locks.checkLock(lost, ORDER, "A", "alice")).isInstanceOf(LockNotHeldException.class);

        List<String> held = f.snapshot();
        locks.releaseLock(bob, "bob");
        // Undo the release, as a crash would: the lock is back, for bob only, until it expires.
        db.execute("DELETE FROM " + f.table);
        String[] row = held.get(0).split("\\|");
        db.execute(
                "INSERT INTO " + f.table + " (lock_type, resource_id, lock_id, lock_owner, acquired_at, expires_at)"
                        + " VALUES (?, ?, ?, ?, " + f.dialect.clock() + ", " + f.dialect.clockPlusMicros("300000")
                        + ")",
                row[0],
                row[1],
                row[2],
                row[3]);
        assertThatThrownBy(() -> locks.tryLock(ORDER, "A", "carol")).isInstanceOf(AlreadyLockedException.class);
        f.awaitDbTimePast(f.expiresAt(ORDER, "A"));
        locks.checkLock(locks.tryLock(ORDER, "A", "carol"), ORDER, "A", "carol");
    }

    @DatabaseTest
    void durableAndRelaxedModesKeepTheSameContract(TestDatabase db) throws Exception {
        OfflineLockFixture f = OfflineLockFixture.create(db);
        for (CommitDurability mode : CommitDurability.values()) {
            JdbcLockManager locks = f.manager(b -> b.durability(mode));
            assertThat(locks.durability()).isEqualTo(mode);
            LockId lockId = locks.tryLock(ORDER, mode.name(), "alice");
            assertThatThrownBy(() -> locks.tryLock(ORDER, mode.name(), "bob"))
                    .isInstanceOf(AlreadyLockedException.class);
            locks.releaseLock(lockId, "alice");
            assertThatThrownBy(() -> locks.releaseLock(lockId, "alice")).isInstanceOf(LockNotHeldException.class);
            locks.releaseLock(locks.tryLock(ORDER, mode.name(), "bob"));
        }
    }

    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void theRelaxedCommitLeavesThePooledSessionUntouched(TestDatabase db) throws Exception {
        OfflineLockFixture f = OfflineLockFixture.create(db);
        try (HikariDataSource pool = db.newPool(1)) {
            JdbcLockManager locks = f.manager(pool, b -> b.durability(CommitDurability.RELAXED));
            LockId lockId = locks.tryLock(ORDER, "A", "alice");
            assertThat(setting(pool)).isEqualTo("on");
            locks.releaseLock(lockId);
            assertThat(setting(pool)).isEqualTo("on");
            assertThatThrownBy(() -> locks.releaseLock(lockId)).isInstanceOf(LockNotHeldException.class);
            assertThat(setting(pool)).isEqualTo("on");
        }
    }

    private static String setting(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement();
                var rs = s.executeQuery("SHOW synchronous_commit")) {
            rs.next();
            return rs.getString(1);
        }
    }

    /** A data source whose connections arrive with autocommit off. */
    private static DataSource autocommitOff(DataSource pool) {
        return (DataSource) Proxy.newProxyInstance(
                OfflineLockContractTest.class.getClassLoader(),
                new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                    try {
                        Object result = method.invoke(pool, args);
                        if (result instanceof Connection c) {
                            c.setAutoCommit(false);
                        }
                        return result;
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }
}
