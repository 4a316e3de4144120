package dev.holdfast.jdbc.internal;

import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.pessimistic.offline.LockManager;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** One check for every stored name: characters are code points, as the databases count them. */
class NamesTest {

    private static final String EMOJI = "\uD83D\uDE00";

    @Test
    void lengthIsCountedInCodePointsNotUtf16Units() {
        assertThat(Names.require("name", EMOJI.repeat(200), 200)).hasSize(400);
        assertThatThrownBy(() -> Names.require("name", EMOJI.repeat(201), 200))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("201 characters");
    }

    @Test
    void nullBlankControlAndBrokenUnicodeAreRefused() {
        assertThatThrownBy(() -> Names.require("owner", null, 10)).hasMessage("owner must not be null");
        assertThatThrownBy(() -> Names.require("owner", " \t", 10)).hasMessageContaining("blank");
        assertThatThrownBy(() -> Names.require("owner", "a\u0007b", 10)).hasMessageContaining("U+0007 at index 1");
        assertThatThrownBy(() -> Names.require("owner", "a\uD800", 10)).hasMessageContaining("unpaired surrogate");
    }

    /** 150 emoji: 150 characters but 300 UTF-16 units; the lease check once refused what the lock check took. */
    @DatabaseTest
    void aNameOf150EmojiIsStoredByLeasesAndLocksAlike(TestDatabase db) throws Exception {
        String name = EMOJI.repeat(150);
        String leaseTable = db.newTableName("names_leases");
        db.dropAfterTest(leaseTable + "_queue");
        String lockTable = db.newTableName("names_locks");
        SchemaInstaller schema = new SchemaInstaller(db.dataSource());
        schema.install(HoldfastTable.LEASES, leaseTable);
        schema.install(HoldfastTable.OFFLINE_LOCKS, lockTable);

        try (LeaseService leases =
                LeaseService.builder(db.dataSource()).table(leaseTable).build()) {
            Lease lease = leases.tryAcquire(name, name, Duration.ofSeconds(30)).orElseThrow();
            assertThat(leases.find(name).orElseThrow().owner()).isEqualTo(name);
            leases.release(lease);
            assertThatThrownBy(() -> leases.tryAcquire(
                            EMOJI.repeat(LeaseService.MAX_NAME_LENGTH + 1), "a", Duration.ofSeconds(1)))
                    .isInstanceOf(IllegalArgumentException.class);
        }
        JdbcLockManager locks =
                JdbcLockManager.builder(db.dataSource()).table(lockTable).build();
        LockId lockId = locks.tryLock("order", name, name);
        locks.checkLock(lockId, "order", name, name);
        assertThatThrownBy(() -> locks.tryLock("order", EMOJI.repeat(LockManager.MAX_ID_LENGTH + 1), "a"))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
