package dev.holdfast.lease;

import dev.holdfast.jdbc.CommitDurability;
import dev.holdfast.lease.internal.LeaseStore;
import dev.holdfast.lease.internal.LeaseStores;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TimeZone;
import javax.sql.DataSource;

import static dev.holdfast.lease.LeaseFixture.dump;
import static dev.holdfast.lease.LeaseFixture.install;
import static dev.holdfast.lease.LeaseFixture.rows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

/** Every rule of {@link LeaseService}'s acquire/renew/release contract, on every database. */
class LeaseContractTest {

    /** The service under test: {@link LeaseContractWithCohortHandOffsTest} runs every rule with cohort hand-off on. */
    LeaseService service(DataSource dataSource, String table) {
        return LeaseFixture.service(dataSource, table);
    }

    private static final Duration LONG = Duration.ofSeconds(30);
    /** Long enough that the next statement reaches the database before it runs out, even on a loaded machine. */
    private static final Duration SHORT = Duration.ofMillis(1000);

    private static void sleepPast(Lease lease, LeaseService leases) throws InterruptedException {
        // The lease's TTL (by its own database times) runs out, with 20 ms to spare.
        Thread.sleep(Duration.between(lease.acquiredAt(), lease.expiresAt()).toMillis() + 20);
    }

    @DatabaseTest
    void aFreeLeaseIsGrantedWithTokenOneForItsTtlInDatabaseTime(TestDatabase db) throws Exception {
        String table = install(db);
        try (LeaseService leases = service(db.dataSource(), table)) {
            Lease lease = leases.tryAcquire("job", "a", Duration.ofSeconds(7)).orElseThrow();
            assertThat(lease.name()).isEqualTo("job");
            assertThat(lease.owner()).isEqualTo("a");
            assertThat(lease.token()).isEqualTo(1);
            assertThat(Duration.between(lease.acquiredAt(), lease.expiresAt())).isEqualTo(Duration.ofSeconds(7));
            assertThat(leases.find("job")).contains(lease);
            assertThat(rows(db, table)).isEqualTo(1);
        }
    }

    @DatabaseTest
    void anotherOwnerIsRefusedWhileTheLeaseIsLiveAndNothingChanges(TestDatabase db) throws Exception {
        String table = install(db);
        try (LeaseService leases = service(db.dataSource(), table)) {
            assertThat(leases.tryAcquire("job", "a", LONG)).isPresent();
            String before = dump(db, table);
            assertThat(leases.tryAcquire("job", "b", LONG)).isEmpty();
            assertThat(leases.tryLock("job", "b", LONG)).isFalse();
            assertThat(leases.tryAcquire("job", "A", LONG))
                    .as("owners are case-sensitive")
                    .isEmpty();
            assertThat(leases.tryAcquire("job", "a ", LONG))
                    .as("trailing space is another owner")
                    .isEmpty();
            assertThat(dump(db, table)).isEqualTo(before);
        }
    }

    /** The seed's re-entrant {@code tryLock}: the owner re-acquiring extends (tryAcquire refuses, see below). */
    @DatabaseTest
    void theOwnerReacquiringExtendsAndKeepsTokenAndAcquiredAt(TestDatabase db) throws Exception {
        String table = install(db);
        try (LeaseService leases = service(db.dataSource(), table)) {
            Lease first = leases.tryAcquire("job", "a", Duration.ofSeconds(10)).orElseThrow();
            assertThat(leases.tryLock("job", "a", Duration.ofSeconds(60))).isTrue();
            Lease again = leases.find("job").orElseThrow();
            assertThat(again.owner()).isEqualTo("a");
            assertThat(again.token()).isEqualTo(first.token());
            assertThat(again.acquiredAt()).isEqualTo(first.acquiredAt());
            assertThat(again.expiresAt()).isAfter(first.expiresAt().plusSeconds(49));
            Lease renewed = leases.renew(again, Duration.ofSeconds(5));
            assertThat(renewed.token()).isEqualTo(first.token());
            assertThat(renewed.expiresAt()).isBefore(again.expiresAt());
            assertThat(leases.find("job").orElseThrow().expiresAt()).isEqualTo(renewed.expiresAt());
        }
    }

    /** {@code tryAcquire} and {@code lock} are exclusive per call: the owner's own live grant refuses them; nothing changes. */
    @DatabaseTest
    void tryAcquireAndLockRefuseTheOwnersOwnLiveGrantAndChangeNothing(TestDatabase db) throws Exception {
        String table = install(db);
        try (LeaseService leases = service(db.dataSource(), table)) {
            Lease first = leases.tryAcquire("job", "a", Duration.ofSeconds(10)).orElseThrow();
            String before = dump(db, table);
            assertThat(leases.tryAcquire("job", "a", Duration.ofSeconds(60))).isEmpty();
            assertThatThrownBy(() -> leases.acquire("job", "a", Duration.ofSeconds(60), Duration.ZERO))
                    .isInstanceOf(LeaseTimeoutException.class);
            assertThatThrownBy(() -> leases.acquire("job", "a", Duration.ofSeconds(60), Duration.ofMillis(50)))
                    .isInstanceOf(LeaseTimeoutException.class);
            assertThat(dump(db, table)).isEqualTo(before);
            leases.release(first);
            Lease next = leases.tryAcquire("job", "a", Duration.ofSeconds(60)).orElseThrow();
            assertThat(next.token()).isEqualTo(first.token() + 1);
        }
    }

    @DatabaseTest
    void anExpiredLeaseIsTakenOverByDatabaseTimeWithAGreaterToken(TestDatabase db) throws Exception {
        String table = install(db);
        try (LeaseService leases = service(db.dataSource(), table)) {
            Lease a = leases.tryAcquire("job", "a", SHORT).orElseThrow();
            assertThat(leases.tryAcquire("job", "b", LONG)).isEmpty();
            sleepPast(a, leases);
            Lease b = leases.tryAcquire("job", "b", LONG).orElseThrow();
            assertThat(b.token()).isEqualTo(a.token() + 1);
            assertThat(b.acquiredAt()).isAfterOrEqualTo(a.expiresAt());
            assertThat(rows(db, table)).isEqualTo(1);
        }
    }

    @DatabaseTest
    void theSameOwnerAfterItsOwnExpiryGetsANewGrantWithANewToken(TestDatabase db) throws Exception {
        String table = install(db);
        try (LeaseService leases = service(db.dataSource(), table)) {
            Lease a = leases.tryAcquire("job", "a", SHORT).orElseThrow();
            sleepPast(a, leases);
            Lease again = leases.tryAcquire("job", "a", LONG).orElseThrow();
            assertThat(again.token()).isEqualTo(a.token() + 1);
            assertThat(again.acquiredAt()).isAfter(a.acquiredAt());
            // The old grant is gone: releasing it says it expired; the new one is untouched.
            assertThatThrownBy(() -> leases.release(a)).isInstanceOf(LeaseExpiredException.class);
            leases.release(again);
        }
    }

    @DatabaseTest
    void releaseExpiresTheRowWithoutDeletingItAndTokensKeepGrowing(TestDatabase db) throws Exception {
        String table = install(db);
        try (LeaseService leases = service(db.dataSource(), table)) {
            long last = 0;
            List<Long> tokens = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                String owner = i % 3 == 0 ? "a" : i % 3 == 1 ? "b" : "c";
                Lease lease = leases.tryAcquire("job", owner, LONG).orElseThrow();
                assertThat(lease.token()).isGreaterThan(last);
                last = lease.token();
                tokens.add(last);
                if (i % 2 == 0) {
                    leases.release(lease);
                } else {
                    leases.unlock("job", owner);
                }
                Lease row = leases.find("job").orElseThrow();
                assertThat(row.isReleased()).isTrue();
                assertThat(row.token()).isEqualTo(last);
                assertThat(rows(db, table)).isEqualTo(1);
            }
            assertThat(tokens)
                    .containsExactly(
                            1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L, 12L, 13L, 14L, 15L, 16L, 17L, 18L, 19L, 20L);
            assertThat(leases.list()).isEmpty();
        }
    }

    @DatabaseTest
    void releaseByAnotherOwnerIsATypedErrorAndChangesNothing(TestDatabase db) throws Exception {
        String table = install(db);
        try (LeaseService leases = service(db.dataSource(), table)) {
            Lease a = leases.tryAcquire("job", "a", LONG).orElseThrow();
            String before = dump(db, table);
            LeaseNotHeldException e =
                    catchThrowableOfType(LeaseNotHeldException.class, () -> leases.unlock("job", "b"));
            assertThat(e).isNotInstanceOf(LeaseExpiredException.class).hasMessageContaining("not the owner");
            assertThat(e.current()).contains(a);
            Lease forged = new Lease("job", "b", a.token(), a.acquiredAt(), a.expiresAt());
            assertThatThrownBy(() -> leases.release(forged)).isExactlyInstanceOf(LeaseNotHeldException.class);
            Lease forgedToken = new Lease("job", "a", a.token() + 5, a.acquiredAt(), a.expiresAt());
            assertThatThrownBy(() -> leases.release(forgedToken)).isExactlyInstanceOf(LeaseNotHeldException.class);
            assertThatThrownBy(() -> leases.renew(forged, LONG)).isExactlyInstanceOf(LeaseNotHeldException.class);
            assertThatThrownBy(() -> leases.unlock("nothing", "a"))
                    .isExactlyInstanceOf(LeaseNotHeldException.class)
                    .hasMessageContaining("no such lease");
            assertThat(dump(db, table)).isEqualTo(before);
        }
    }

    @DatabaseTest
    void releasingAnExpiredLeaseTellsTheCallerItMayHaveOverlapped(TestDatabase db) throws Exception {
        String table = install(db);
        try (LeaseService leases = service(db.dataSource(), table)) {
            Lease a = leases.tryAcquire("job", "a", SHORT).orElseThrow();
            sleepPast(a, leases);
            LeaseExpiredException expired = catchThrowableOfType(LeaseExpiredException.class, () -> leases.release(a));
            assertThat(expired).hasMessageContaining("expired").hasMessageContaining("overlapped");
            assertThatThrownBy(() -> leases.unlock("job", "a")).isInstanceOf(LeaseExpiredException.class);
            assertThatThrownBy(() -> leases.renew(a, LONG)).isInstanceOf(LeaseExpiredException.class);

            Lease b = leases.tryAcquire("job", "b", LONG).orElseThrow();
            LeaseExpiredException takenOver =
                    catchThrowableOfType(LeaseExpiredException.class, () -> leases.release(a));
            assertThat(takenOver.current()).contains(b);
            assertThat(takenOver).hasMessageContaining("granted again");
            assertThat(leases.find("job")).contains(b);
        }
    }

    @DatabaseTest
    void releasingTwiceSaysAlreadyReleased(TestDatabase db) throws Exception {
        String table = install(db);
        try (LeaseService leases = service(db.dataSource(), table)) {
            Lease a = leases.tryAcquire("job", "a", LONG).orElseThrow();
            leases.release(a);
            LeaseNotHeldException e = catchThrowableOfType(LeaseNotHeldException.class, () -> leases.release(a));
            assertThat(e).isExactlyInstanceOf(LeaseNotHeldException.class).hasMessageContaining("already released");
            assertThatThrownBy(() -> leases.renew(a, LONG)).isExactlyInstanceOf(LeaseNotHeldException.class);
        }
    }

    @DatabaseTest
    void aReleaseWithAMinimumHoldKeepsTheLeaseUntilThen(TestDatabase db) throws Exception {
        String table = install(db);
        try (LeaseService leases = service(db.dataSource(), table)) {
            Lease a = leases.tryAcquire("job", "a", LONG).orElseThrow();
            leases.release(a, Duration.ofMillis(2000));
            Lease row = leases.find("job").orElseThrow();
            assertThat(row.isReleased()).isFalse();
            assertThat(row.expiresAt()).isEqualTo(a.acquiredAt().plusMillis(2000));
            assertThat(leases.tryAcquire("job", "b", LONG)).isEmpty();
            Lease b = LeaseFaultTest.awaitGrant(leases, "job", "b");
            assertThat(b.acquiredAt()).isAfterOrEqualTo(a.acquiredAt().plusMillis(2000));
            Thread.sleep(20); // a 1 ms minimum hold from b's grant is over by then
            leases.release(b, Duration.ofMillis(1));
            assertThat(leases.find("job").orElseThrow().isReleased())
                    .as("minimum already over")
                    .isTrue();
            assertThatThrownBy(() -> leases.release(b, Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    @DatabaseTest
    void operatorsListLiveLeasesAndForceReleaseOne(TestDatabase db) throws Exception {
        String table = install(db);
        try (LeaseService leases = service(db.dataSource(), table)) {
            Lease x = leases.tryAcquire("x", "a", LONG).orElseThrow();
            Lease y = leases.tryAcquire("y", "b", LONG).orElseThrow();
            Lease z = leases.tryAcquire("z", "c", LONG).orElseThrow();
            leases.release(z);
            assertThat(leases.list()).containsExactly(x, y);

            assertThat(leases.forceRelease("x")).isTrue();
            assertThat(leases.forceRelease("x")).isFalse();
            assertThat(leases.list()).containsExactly(y);
            assertThatThrownBy(() -> leases.release(x)).isExactlyInstanceOf(LeaseNotHeldException.class);
            Lease next = leases.tryAcquire("x", "d", LONG).orElseThrow();
            assertThat(next.token()).isEqualTo(x.token() + 1);
        }
    }

    /**
     * Servers whose session time zones and JVM default zone disagree by 25 hours still agree on
     * expiry, because every decision is taken by the database clock in absolute time. (The service
     * reads no application clock at all: waits use {@link System#nanoTime()}.)
     */
    @DatabaseTest
    void serversWithDisagreeingClocksAndZonesStillExcludeEachOther(TestDatabase db) throws Exception {
        String table = install(db);
        DataSource east = LeaseFixture.withSessionSetting(db.newPool(2), LeaseFixture.timeZoneSql(db, "+13:00"));
        DataSource west = LeaseFixture.withSessionSetting(db.newPool(2), LeaseFixture.timeZoneSql(db, "-12:00"));
        TimeZone jvmZone = TimeZone.getDefault();
        try (LeaseService a = service(east, table);
                LeaseService b = service(west, table)) {
            TimeZone.setDefault(TimeZone.getTimeZone("Pacific/Kiritimati"));
            Lease held = a.tryAcquire("job", "east", Duration.ofMillis(2000)).orElseThrow();
            TimeZone.setDefault(TimeZone.getTimeZone("Etc/GMT+12"));
            assertThat(b.tryAcquire("job", "west", LONG))
                    .as("live by database time")
                    .isEmpty();
            assertThat(b.find("job")).contains(held);
            Lease taken = await("west takes the lease once it ran out")
                    .atMost(LeaseFixture.AT_MOST)
                    .pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(5))
                    .until(() -> b.tryAcquire("job", "west", LONG).orElse(null), java.util.Objects::nonNull);
            assertThat(taken).isNotNull();
            assertThat(taken.token()).isEqualTo(held.token() + 1);
            assertThat(taken.acquiredAt()).isAfterOrEqualTo(held.expiresAt());
            assertThat(Duration.between(held.expiresAt(), taken.acquiredAt())).isLessThan(Duration.ofSeconds(3));
        } finally {
            TimeZone.setDefault(jvmZone);
        }
    }

    @DatabaseTest
    void badInputIsATypedErrorAndWritesNothing(TestDatabase db) throws Exception {
        String table = install(db);
        try (LeaseService leases = service(db.dataSource(), table)) {
            assertThat(leases.tryAcquire("existing", "a", LONG)).isPresent();
            String before = dump(db, table);
            String oversize = "n".repeat(LeaseService.MAX_NAME_LENGTH + 1);
            List<Runnable> bad = List.of(
                    () -> leases.tryAcquire(null, "a", LONG),
                    () -> leases.tryAcquire("", "a", LONG),
                    () -> leases.tryAcquire("   ", "a", LONG),
                    () -> leases.tryAcquire(oversize, "a", LONG),
                    () -> leases.tryAcquire("tab\there", "a", LONG),
                    () -> leases.tryAcquire("bad\uD800surrogate", "a", LONG),
                    () -> leases.tryAcquire("job", null, LONG),
                    () -> leases.tryAcquire("job", " ", LONG),
                    () -> leases.tryAcquire("job", oversize, LONG),
                    () -> leases.tryAcquire("job", "nul\u0000", LONG),
                    () -> leases.tryAcquire("job", "a", null),
                    () -> leases.tryAcquire("job", "a", Duration.ZERO),
                    () -> leases.tryAcquire("job", "a", Duration.ofMillis(-5)),
                    () -> leases.tryAcquire("job", "a", Duration.ofNanos(999_999)),
                    () -> leases.tryAcquire("job", "a", Duration.ofDays(367)),
                    () -> leases.tryAcquire("job", "a", Duration.ofSeconds(Long.MAX_VALUE)),
                    () -> leases.tryAcquire("existing", "a", Duration.ZERO),
                    () -> lock(leases, "job", "a", LONG, Duration.ofMillis(-1)),
                    () -> lock(leases, "job", "a", LONG, Duration.ofDays(10_000)),
                    () -> lock(leases, "job", "a", Duration.ZERO, LONG),
                    () -> leases.unlock("existing", ""),
                    () -> leases.unlock(null, "a"),
                    () -> leases.release(null),
                    () -> leases.renew(null, LONG),
                    () -> leases.forceRelease(" "),
                    () -> leases.keepAlive(null, LONG, null),
                    () -> LeaseService.builder(db.dataSource()).table("leases; DROP TABLE x"),
                    () -> LeaseService.builder(null));
            for (Runnable call : bad) {
                assertThatThrownBy(call::run).isInstanceOf(IllegalArgumentException.class);
            }
            Lease existing = leases.find("existing").orElseThrow();
            assertThatThrownBy(() -> leases.renew(existing, Duration.ofDays(400)))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThat(dump(db, table)).isEqualTo(before);
            assertThat(rows(db, table)).isEqualTo(1);
            // The limits themselves are accepted.
            assertThat(leases.tryAcquire(
                            "n".repeat(LeaseService.MAX_NAME_LENGTH),
                            "o".repeat(LeaseService.MAX_NAME_LENGTH),
                            Duration.ofDays(366)))
                    .isPresent();
            assertThat(leases.tryAcquire("\uD83D\uDE00 emoji", "ü", Duration.ofMillis(1)))
                    .isPresent();
        }
    }

    private static void lock(LeaseService leases, String name, String owner, Duration ttl, Duration wait) {
        try {
            leases.acquire(name, owner, ttl, wait);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * The fast release turns {@code synchronous_commit} off for the release's own transaction only:
     * inside it the setting is off, and the session keeps {@code on} afterwards.
     */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void relaxedReleaseIsScopedToItsOwnTransaction(TestDatabase db) throws Exception {
        String table = install(db);
        var pool = db.newPool(1);
        try (LeaseService leases = service(pool, table)) {
            Lease a = leases.tryAcquire("job", "a", LONG).orElseThrow();
            leases.release(a);
            try (Connection c = pool.getConnection()) {
                assertThat(setting(c)).isEqualTo("on");
            }
            Lease b = leases.tryAcquire("job", "a", LONG).orElseThrow();
            LeaseStore sql = LeaseStores.forDialect(leases.dialect(), table);
            try (Connection c = pool.getConnection()) {
                c.setAutoCommit(false);
                assertThat(sql.release(c, "job", "a", b.token(), true, null)).isTrue();
                assertThat(setting(c)).as("inside the release's transaction").isEqualTo("off");
                c.commit();
                assertThat(setting(c)).as("after it").isEqualTo("on");
                c.setAutoCommit(true);
            }
            // A fast release followed by a hand-off to a queued waiter commits durably: the hand-off grants.
            Lease d = leases.tryAcquire("job", "a", LONG).orElseThrow();
            try (Connection c = pool.getConnection();
                    Connection listener = LeaseFixture.listener(db)) {
                LeaseDurabilityTest.queueWaiter(db, table, "job", "waiter", "w", LeaseDurabilityTest.pid(listener));
                c.setAutoCommit(false);
                assertThat(sql.release(c, "job", "a", d.token(), true, null)).isTrue();
                assertThat(setting(c)).as("release that handed the lease over").isEqualTo("on");
                c.commit();
                c.setAutoCommit(true);
            }
            assertThat(leases.find("job").orElseThrow().owner()).isEqualTo("w");
            leases.forceRelease("job");
        }
        try (LeaseService durable = LeaseService.builder(pool)
                .table(table)
                .durability(CommitDurability.DURABLE)
                .build()) {
            Lease c1 = durable.tryAcquire("job", "a", LONG).orElseThrow();
            durable.release(c1);
            assertThat(durable.find("job").orElseThrow().isReleased()).isTrue();
        }
    }

    private static String setting(Connection c) throws Exception {
        try (PreparedStatement ps = c.prepareStatement("SELECT current_setting('synchronous_commit')");
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getString(1);
        }
    }

    @DatabaseTest
    void aPoolOfManualCommitConnectionsWorksToo(TestDatabase db) throws Exception {
        String table = install(db);
        DataSource manual = LeaseFixture.withSessionSetting(db.newPool(1), "SELECT 1");
        DataSource wrapped = (DataSource) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    Object r = method.invoke(manual, args);
                    if (r instanceof Connection c) {
                        c.setAutoCommit(false);
                    }
                    return r;
                });
        try (LeaseService leases = service(wrapped, table);
                LeaseService other = service(db.dataSource(), table)) {
            Lease a = leases.tryAcquire("job", "a", LONG).orElseThrow();
            assertThat(other.find("job")).as("committed").contains(a);
            leases.release(a);
            assertThat(other.find("job").orElseThrow().isReleased()).isTrue();
        }
    }

    @DatabaseTest
    void findShowsNothingForAnUnknownName(TestDatabase db) throws Exception {
        String table = install(db);
        try (LeaseService leases = service(db.dataSource(), table)) {
            assertThat(leases.find("unknown")).isEqualTo(Optional.empty());
            assertThat(leases.list()).isEmpty();
        }
    }
}
