package dev.holdfast.lease;

import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The fencing example: a holder pauses past its TTL (a GC pause), another server takes the lease
 * over and writes; the paused holder's late write is refused by the database, and its release
 * tells it the lease had expired.
 */
class FencedUpdateTest {

    @DatabaseTest
    void aPausedHoldersLateWriteIsRefused(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        String account = db.newTableName("fenced_account");
        db.execute("CREATE TABLE " + account + " (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL, fence_token BIGINT)");
        db.execute("INSERT INTO " + account + " (id, balance) VALUES (1, 100)");
        FencedUpdate fence = FencedUpdate.of(account, "id", "fence_token", "balance");
        assertThat(fence.sql())
                .isEqualTo("UPDATE " + account + " SET balance = ?, fence_token = ? WHERE id = ?"
                        + " AND (fence_token IS NULL OR fence_token <= ?)");

        try (LeaseService a = LeaseFixture.service(db.newPool(1), table);
                LeaseService b = LeaseFixture.service(db.newPool(1), table);
                Connection c = db.connection()) {
            Lease slow = a.tryAcquire("account-1", "server-a", Duration.ofMillis(100))
                    .orElseThrow();
            assertThat(fence.update(c, slow.token(), 1L, 110L)).isTrue();
            assertThat(fence.update(c, slow.token(), 1L, 120L))
                    .as("same grant writes again")
                    .isTrue();

            Thread.sleep(150); // the pause
            Lease fast = b.tryAcquire("account-1", "server-b", Duration.ofSeconds(30))
                    .orElseThrow();
            assertThat(fence.update(c, fast.token(), 1L, 500L)).isTrue();

            assertThat(fence.update(c, slow.token(), 1L, 130L))
                    .as("stale token")
                    .isFalse();
            assertThat(db.queryLong("SELECT balance FROM " + account + " WHERE id = 1"))
                    .isEqualTo(500);
            assertThat(db.queryLong("SELECT fence_token FROM " + account + " WHERE id = 1"))
                    .isEqualTo(fast.token());
            assertThatThrownBy(() -> a.release(slow)).isInstanceOf(LeaseExpiredException.class);
            assertThat(fence.update(c, fast.token(), 2L, 1L)).as("no such row").isFalse();
            b.release(fast);
        }
    }

    @DatabaseTest
    void identifiersAndArityAreChecked(TestDatabase db) throws Exception {
        assertThatThrownBy(() -> FencedUpdate.of("t; drop", "id", "f", "v"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FencedUpdate.of("t", "id", "f")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FencedUpdate.of("t", "id", "f", "x y")).isInstanceOf(IllegalArgumentException.class);
        FencedUpdate fence = FencedUpdate.of("t", "id", "f", "a", "b");
        try (Connection c = db.connection()) {
            assertThatThrownBy(() -> fence.update(c, 1, 1L, 1)).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
