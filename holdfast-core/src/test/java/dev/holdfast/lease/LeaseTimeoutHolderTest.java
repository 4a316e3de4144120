package dev.holdfast.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.Holder;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.lease.internal.LeaseStores;
import dev.holdfast.pessimistic.offline.AlreadyLockedException;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

/**
 * A {@link LeaseTimeoutException} names who held the lease when the caller gave up and how many
 * waiters were queued ahead of it, or says why that is unknown; looking never hides the timeout and
 * leaves nothing behind.
 */
class LeaseTimeoutHolderTest {

    private static final Duration LONG = Duration.ofSeconds(30);
    private static final Duration SHORT_WAIT = Duration.ofMillis(300);

    @DatabaseTest
    void aTimeoutNamesTheHolderAndNobodyAhead(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService a = LeaseFixture.service(db.newPool(2), table);
                LeaseService b = LeaseFixture.service(db.newPool(2), table)) {
            Lease held = a.tryAcquire("job", "a", LONG).orElseThrow();
            String before = LeaseFixture.dump(db, table);

            LeaseTimeoutException e =
                    catchThrowableOfType(LeaseTimeoutException.class, () -> b.acquire("job", "b", LONG, SHORT_WAIT));

            assertThat(e.holderKnown()).as(e.getMessage()).isTrue();
            assertThat(e.holder()).contains(new Holder("a", held.acquiredAt(), held.expiresAt(), held.token()));
            assertThat(e.holder()).contains(held.holder());
            assertThat(e.waitersAhead()).hasValue(0);
            assertThat(e.seenAt()).hasValueSatisfying(at -> assertThat(at).isAfter(held.acquiredAt()));
            assertThat(e.holderUnknownBecause()).isEmpty();
            assertThat(e.getMessage())
                    .contains("held by 'a' (token " + held.token() + ")")
                    .contains("0 waiters were queued ahead");
            assertThat(LeaseFixture.dump(db, table))
                    .as("looking changed nothing")
                    .isEqualTo(before);
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + "_queue"))
                    .as("the caller left the queue")
                    .isZero();

            // A zero wait tries once and looks once, the same way.
            LeaseTimeoutException once =
                    catchThrowableOfType(LeaseTimeoutException.class, () -> b.acquire("job", "b", LONG, Duration.ZERO));
            assertThat(once.holder()).contains(held.holder());
            assertThat(once.waitersAhead()).hasValue(0);
        }
    }

    @DatabaseTest
    void aTimeoutCountsTheWaitersQueuedAheadOfIt(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService a = LeaseFixture.service(db.newPool(2), table);
                LeaseService waiters = LeaseFixture.service(db.newPool(4), table);
                LeaseService d = LeaseFixture.service(db.newPool(2), table)) {
            Lease held = a.tryAcquire("job", "a", LONG).orElseThrow();
            CompletableFuture<Lease> b = LeaseFixture.lockAsync(waiters, "job", "b", LONG, LONG);
            LeaseFixture.awaitQueued(db, table, 1);
            CompletableFuture<Lease> c = LeaseFixture.lockAsync(waiters, "job", "c", LONG, LONG);
            LeaseFixture.awaitQueued(db, table, 2);

            LeaseTimeoutException e =
                    catchThrowableOfType(LeaseTimeoutException.class, () -> d.acquire("job", "d", LONG, SHORT_WAIT));
            assertThat(e.holder()).as(e.getMessage()).contains(held.holder());
            assertThat(e.waitersAhead()).hasValue(2);
            assertThat(e.getMessage()).contains("2 waiters were queued ahead");

            LeaseTimeoutException once =
                    catchThrowableOfType(LeaseTimeoutException.class, () -> d.acquire("job", "d", LONG, Duration.ZERO));
            assertThat(once.waitersAhead())
                    .as("a call without a place in the queue: every live waiter is ahead")
                    .hasValue(2);

            a.release(held);
            Lease first = b.get(30, TimeUnit.SECONDS);
            waiters.release(first);
            waiters.release(c.get(30, TimeUnit.SECONDS));
        }
    }

    @DatabaseTest
    void aLeaseFreeWhenLookedAtIsReportedSoWithTheWaiterItWasKeptFor(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService a = LeaseFixture.service(db.newPool(2), table);
                LeaseService b = LeaseFixture.service(db.newPool(2), table)) {
            a.release(a.tryAcquire("job", "a", LONG).orElseThrow());
            // A waiter that stopped polling (a crashed process): its entry stays live for a while, and
            // the free lease is kept for it.
            db.execute(
                    switch (db.kind()) {
                        case H2 ->
                            "INSERT INTO " + table + "_queue (name, owner, queued_at, wait_until)"
                                    + " VALUES ('job', 'gone', CURRENT_TIMESTAMP, DATEADD(SECOND, 60, CURRENT_TIMESTAMP))";
                        case POSTGRESQL ->
                            "INSERT INTO " + table + "_queue (name, owner, wait_until)"
                                    + " VALUES ('job', 'gone', clock_timestamp() + interval '60 seconds')";
                        case MARIADB ->
                            "INSERT INTO " + table + "_queue (name, owner, queued_at, wait_until)"
                                    + " VALUES ('job', 'gone', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL 60 SECOND)";
                    });

            LeaseTimeoutException e =
                    catchThrowableOfType(LeaseTimeoutException.class, () -> b.acquire("job", "b", LONG, SHORT_WAIT));
            assertThat(e.holderKnown()).as(e.getMessage()).isTrue();
            assertThat(e.holder()).as("free when looked at").isEmpty();
            assertThat(e.waitersAhead()).hasValue(1);
            assertThat(e.getMessage()).contains("free when looked at").contains("1 waiter was queued ahead");
        }
    }

    @DatabaseTest
    void aLookThatFailsStillThrowsTheTimeoutSayingWhyTheHolderIsUnknown(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        String look = LeaseStores.forDialect(Dialect.detect(db.dataSource()), table)
                .sql()
                .timeoutSql();
        AtomicInteger refused = new AtomicInteger();
        HikariDataSource pool = db.newPool(2);
        try (LeaseService a = LeaseFixture.service(db.newPool(2), table);
                LeaseService b = LeaseService.builder(LeaseFixture.hooked(pool, (sql, statement) -> {
                            if (sql.equals(look)) {
                                refused.incrementAndGet();
                                throw new SQLException("permission denied (injected)", "42501");
                            }
                            return statement.call();
                        }))
                        .table(table)
                        .build()) {
            Lease held = a.tryAcquire("job", "a", LONG).orElseThrow();
            String before = LeaseFixture.dump(db, table);

            LeaseTimeoutException e =
                    catchThrowableOfType(LeaseTimeoutException.class, () -> b.acquire("job", "b", LONG, SHORT_WAIT));

            assertThat(refused).hasValue(1);
            assertThat(e.holderKnown()).isFalse();
            assertThat(e.holder()).isEmpty();
            assertThat(e.waitersAhead()).isEmpty();
            assertThat(e.seenAt()).isEmpty();
            assertThat(e.holderUnknownBecause())
                    .hasValueSatisfying(why -> assertThat(why)
                            .contains("permission denied (injected)")
                            .contains("42501"));
            assertThat(e.getMessage()).contains("holder unknown: the read failed: permission denied (injected)");
            assertThat(LeaseFixture.dump(db, table)).isEqualTo(before);
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + "_queue"))
                    .as("the caller left the queue all the same")
                    .isZero();
            a.release(held);
        }
        await("every connection back in the pool")
                .atMost(LeaseFixture.AT_MOST)
                .until(() -> pool.getHikariPoolMXBean().getActiveConnections() == 0);
    }

    @DatabaseTest
    void aZeroWaitWhoseQueueTableIsGoneStillTimesOutWithTheReason(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        try (LeaseService a = LeaseFixture.service(db.newPool(2), table);
                LeaseService b = LeaseFixture.service(db.newPool(2), table)) {
            Lease held = a.tryAcquire("job", "a", LONG).orElseThrow();
            db.execute("DROP TABLE " + table + "_queue");
            String before = LeaseFixture.dump(db, table);

            LeaseTimeoutException e =
                    catchThrowableOfType(LeaseTimeoutException.class, () -> b.acquire("job", "b", LONG, Duration.ZERO));

            assertThat(e.holderKnown()).isFalse();
            assertThat(e.holderUnknownBecause())
                    .hasValueSatisfying(why -> assertThat(why.toLowerCase(Locale.ROOT))
                            .startsWith("the read failed")
                            .contains((table + "_queue").toLowerCase(Locale.ROOT)));
            assertThat(LeaseFixture.dump(db, table)).isEqualTo(before);
            a.release(held); // nobody could queue: on MariaDB too, the release does not read the queue
            if (db.kind()
                    == TestDatabase.Kind.MARIADB) { // marked as waited for, a release hands off: it reads the queue
                Lease again = a.tryAcquire("job", "a", LONG).orElseThrow();
                db.execute("UPDATE " + table + " SET waiters_until = UTC_TIMESTAMP(6) + INTERVAL 1 MINUTE");
                String marked = LeaseFixture.dump(db, table);
                assertThat(catchThrowableOfType(dev.holdfast.DatabaseException.class, () -> a.release(again)))
                        .hasMessageContaining(table + "_queue");
                assertThat(LeaseFixture.dump(db, table))
                        .as("the failed release changed nothing")
                        .isEqualTo(marked);
            }
        }
    }

    @Test
    void theHolderOfEveryTechniqueIsOneValue() {
        List<Holder> holders = new ArrayList<>();
        Lease lease =
                new Lease("job", "a", 7, Instant.parse("2026-01-01T10:00:00Z"), Instant.parse("2026-01-01T10:05:00Z"));
        holders.add(lease.holder());
        holders.add(new AlreadyLockedException("order", "A-1", null, lease.acquiredAt(), lease.expiresAt()).holder());
        assertThat(holders.get(0)).isEqualTo(new Holder("a", lease.acquiredAt(), lease.expiresAt(), 7L));
        assertThat(holders.get(0).toString())
                .isEqualTo("'a' (token 7) since 2026-01-01T10:00:00Z until 2026-01-01T10:05:00Z");
        assertThat(holders.get(1).owner()).isNull();
        assertThat(holders.get(1).token()).isNull();
        assertThat(holders.get(1).toString()).startsWith("an unnamed owner since");
    }
}
