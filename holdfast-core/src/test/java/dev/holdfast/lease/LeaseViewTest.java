package dev.holdfast.lease;

import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** {@link LeaseView} pages through live leases and queued waiters, on every database. */
class LeaseViewTest {

    @DatabaseTest
    void liveLeasesComeAPageAtATimeByName(TestDatabase db) {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = LeaseFixture.service(db.dataSource(), table)) {
            for (String name : List.of("e", "a", "d", "c", "b")) {
                assertThat(leases.tryAcquire(name, "owner-" + name, Duration.ofMinutes(5)))
                        .isPresent();
            }
            leases.release(leases.tryAcquire("f", "x", Duration.ofMinutes(5)).orElseThrow()); // not live
            LeaseView view = LeaseView.of(db.dataSource(), leases);

            List<String> seen = new ArrayList<>();
            String after = null;
            List<Lease> page;
            do {
                page = view.live(after, 2);
                assertThat(page).hasSizeLessThanOrEqualTo(2);
                page.forEach(l -> seen.add(l.name()));
                after = page.isEmpty() ? null : page.get(page.size() - 1).name();
            } while (page.size() == 2);
            assertThat(seen).containsExactly("a", "b", "c", "d", "e");
            assertThat(view.live(null, 10)).first().satisfies(l -> {
                assertThat(l.owner()).isEqualTo("owner-a");
                assertThat(l.expiresAt()).isAfter(l.acquiredAt());
            });
            assertThat(view.live("e", 10)).isEmpty();
        }
    }

    @DatabaseTest
    void waitersAreListedInTheirPlace(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = LeaseFixture.service(db.dataSource(), table)) {
            Lease held =
                    leases.tryAcquire("job", "holder", Duration.ofMinutes(5)).orElseThrow();
            LeaseView view = LeaseView.of(db.dataSource(), leases);
            CompletableFuture<Lease> first = CompletableFuture.supplyAsync(() -> acquire(leases, "w1"));
            LeaseFixture.awaitQueued(db, table, 1);
            CompletableFuture<Lease> second = CompletableFuture.supplyAsync(() -> acquire(leases, "w2"));
            LeaseFixture.awaitQueued(db, table, 2);

            List<LeaseWaiter> waiters = view.waiters("job", null, 0, 10);
            assertThat(waiters).extracting(LeaseWaiter::place).containsExactly(1, 2);
            assertThat(waiters).allSatisfy(w -> {
                assertThat(w.name()).isEqualTo("job");
                assertThat(w.waitsUntil()).isAfter(Instant.EPOCH);
            });
            if (db.kind() == TestDatabase.Kind.POSTGRESQL) {
                assertThat(waiters).extracting(LeaseWaiter::owner).containsExactly("w1", "w2");
                assertThat(waiters).extracting(LeaseWaiter::queuedAt).containsOnlyNulls();
            } else {
                assertThat(waiters).extracting(LeaseWaiter::owner).containsOnlyNulls();
                assertThat(waiters.get(0).queuedAt())
                        .isBeforeOrEqualTo(waiters.get(1).queuedAt());
            }
            assertThat(view.waiters(null, null, 0, 1)).hasSize(1);
            assertThat(view.waiters(null, "job", 1, 10))
                    .extracting(LeaseWaiter::place)
                    .containsExactly(2);
            assertThat(view.waiters("other", null, 0, 10)).isEmpty();

            leases.release(held);
            leases.release(first.get());
            leases.release(second.get());
            await().atMost(LeaseFixture.AT_MOST)
                    .until(() -> view.waiters(null, null, 0, 10).isEmpty());
        }
    }

    private static Lease acquire(LeaseService leases, String owner) {
        try {
            return leases.acquire("job", owner, Duration.ofMinutes(1), Duration.ofSeconds(60));
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    @DatabaseTest
    void badArgumentsAreRefusedBeforeAnySql(TestDatabase db) {
        String table = LeaseFixture.install(db);
        try (LeaseService leases = LeaseFixture.service(db.dataSource(), table)) {
            LeaseView view = LeaseView.of(db.dataSource(), leases);
            for (int bad : new int[] {0, -1, LeaseView.MAX_LIMIT + 1}) {
                assertThatThrownBy(() -> view.live(null, bad)).isInstanceOf(IllegalArgumentException.class);
                assertThatThrownBy(() -> view.waiters(null, null, 0, bad)).isInstanceOf(IllegalArgumentException.class);
            }
            assertThatThrownBy(() -> view.live("", 1)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> view.live("x".repeat(LeaseService.MAX_NAME_LENGTH + 1), 1))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> view.waiters("bad\u0000", null, 0, 1))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> view.waiters(null, "job", -1, 1)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> LeaseView.of(null, leases)).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
