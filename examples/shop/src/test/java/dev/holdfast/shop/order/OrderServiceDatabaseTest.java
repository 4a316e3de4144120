package dev.holdfast.shop.order;

import dev.holdfast.pessimistic.LockTimeoutException;
import dev.holdfast.pessimistic.LockWait;
import dev.holdfast.pessimistic.PessimisticLocks;
import dev.holdfast.pessimistic.RowRef;
import dev.holdfast.shop.order.OrderVersionCheck.StaleOrderException;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.springframework.orm.ObjectOptimisticLockingFailureException;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The shop's order service on H2, PostgreSQL and MariaDB: the version the user saw is checked under a
 * row lock taken on the JPA transaction's own connection, and the lock wait is bounded by 3 s.
 */
class OrderServiceDatabaseTest {

    private static ShippingInfo address(String street) {
        return new ShippingInfo(new Receiver("Receiver", "+1 555 0100"), new Address("54321", street, null));
    }

    @DatabaseTest
    void aStaleVersionIsRefusedAndChangesNothing(TestDatabase db) {
        ShopOnDatabase shop = ShopOnDatabase.on(db);
        assertThat(shop.context.getBean(javax.sql.DataSource.class))
                .extracting(dev.holdfast.jdbc.dialect.Dialect::detect)
                .extracting(dev.holdfast.jdbc.dialect.Dialect::id)
                .isEqualTo(db.kind().id());
        String order = shop.newOrder("alice");
        shop.service.changeShippingInfo("alice", order, 0, address("2 Second Street"));

        assertThatThrownBy(() -> shop.service.startShipping("kim", order, 0))
                .isInstanceOfSatisfying(StaleOrderException.class, e -> {
                    assertThat(e.seenVersion()).isZero();
                    assertThat(e.currentVersion()).contains(1L);
                    assertThat(e.modifiedBy()).contains("alice");
                    // Holdfast's VersionConflictException, so Spring code sees an OptimisticLockingFailureException
                    assertThat(e)
                            .isInstanceOf(dev.holdfast.optimistic.VersionConflictException.class)
                            .hasMessageStartingWith("order " + order + " was modified by alice at ")
                            .hasMessageEndingWith("(version 1, you had 0)");
                    assertThat(new dev.holdfast.spring.boot.HoldfastExceptionTranslator().translate(e))
                            .isInstanceOf(org.springframework.dao.OptimisticLockingFailureException.class)
                            .hasCause(e);
                    assertThat(e.lastChange()).contains("2 Second Street");
                });
        assertThat(shop.state(order)).isEqualTo("PREPARING");
        assertThat(shop.version(order)).isEqualTo(1);

        shop.service.startShipping("kim", order, 1);
        assertThat(shop.state(order)).isEqualTo("SHIPPED");
        assertThat(shop.version(order)).isEqualTo(2);
    }

    @DatabaseTest
    void anotherCustomersOrderIsNotFoundAndUnchanged(TestDatabase db) {
        ShopOnDatabase shop = ShopOnDatabase.on(db);
        String order = shop.newOrder("alice");
        assertThatThrownBy(() -> shop.service.changeShippingInfo("bob", order, 0, address("3 Hijack Road")))
                .isInstanceOf(OrderNotFoundException.class);
        assertThat(shop.address1(order)).isEqualTo("1 Original Road");
        assertThat(shop.version(order)).isZero();
    }

    /** The explicit lock-bound test of the issue: a held order row makes start shipping give up after 3 s. */
    @DatabaseTest
    void startShippingWaitsAtMostThreeSeconds(TestDatabase db) throws Exception {
        ShopOnDatabase shop = ShopOnDatabase.on(db);
        String order = shop.newOrder("bob");
        try (Connection holder = shop.dataSource().getConnection()) {
            holder.setAutoCommit(false);
            assertThat(PessimisticLocks.of(shop.dataSource())
                            .forUpdate(
                                    holder,
                                    RowRef.of(shop.table, "order_number", order),
                                    LockWait.atMost(Duration.ofSeconds(1))))
                    .isTrue();
            long start = System.nanoTime();
            assertThatThrownBy(() -> shop.service.startShipping("kim", order, 0))
                    .isInstanceOf(dev.holdfast.spring.boot.RowLockTimeoutException.class)
                    .cause()
                    .isInstanceOf(LockTimeoutException.class);
            long waited = (System.nanoTime() - start) / 1_000_000;
            assertThat(waited).isBetween(2_900L, 10_000L);
            holder.rollback();
        }
        assertThat(shop.state(order)).isEqualTo("PREPARING");
        assertThat(shop.activeConnections())
                .as("connections still borrowed after a lock timeout")
                .isZero();
        shop.service.startShipping("kim", order, 0);
        assertThat(shop.state(order)).isEqualTo("SHIPPED");
    }

    /**
     * Many users submit at once, all having seen the same version: exactly one change wins per round,
     * every other one is refused, and the row holds the winner's change (checked with plain SQL).
     */
    @DatabaseTest
    void concurrentSubmittersOfTheSameVersionLetExactlyOneWin(TestDatabase db) throws Exception {
        ShopOnDatabase shop = ShopOnDatabase.on(db);
        int rounds = 15;
        int writers = 6;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        int refused = 0;
        try {
            for (int round = 0; round < rounds; round++) {
                String order = shop.newOrder("alice");
                CountDownLatch go = new CountDownLatch(1);
                List<Future<String>> results = new ArrayList<>();
                for (int w = 0; w < writers; w++) {
                    String street = "Street of writer " + w;
                    boolean admin = w == 0;
                    results.add(pool.submit((Callable<String>) () -> {
                        go.await();
                        try {
                            if (admin) {
                                shop.service.startShipping("kim", order, 0);
                                return "SHIPPED";
                            }
                            shop.service.changeShippingInfo("alice", order, 0, address(street));
                            return street;
                        } catch (StaleOrderException e) {
                            return null;
                        }
                    }));
                }
                go.countDown();
                List<String> winners = new ArrayList<>();
                for (Future<String> f : results) {
                    String r = f.get(60, TimeUnit.SECONDS);
                    if (r != null) {
                        winners.add(r);
                    }
                }
                assertThat(winners).as("round %d", round).hasSize(1);
                refused += writers - 1;
                assertThat(shop.version(order)).isEqualTo(1);
                if (winners.get(0).equals("SHIPPED")) {
                    assertThat(shop.state(order)).isEqualTo("SHIPPED");
                    assertThat(shop.address1(order)).isEqualTo("1 Original Road");
                } else {
                    assertThat(shop.state(order)).isEqualTo("PREPARING");
                    assertThat(shop.address1(order)).isEqualTo(winners.get(0));
                }
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(shop.activeConnections())
                .as("connections still borrowed after %d refusals", refused)
                .isZero();
        System.out.printf(
                "[%s] %d rounds x %d writers: %d winners, %d refused as stale%n",
                db.id(), rounds, writers, rounds, refused);
    }

    /**
     * Without the row lock, JPA's {@code @Version} still catches a write that raced ours between read and
     * flush; the shop's conflict handler relies on recognising it.
     */
    @DatabaseTest
    void aWriteRacingPastTheVersionCheckIsCaughtAtFlush(TestDatabase db) {
        ShopOnDatabase shop = ShopOnDatabase.on(db);
        String order = shop.newOrder("alice");
        OrderRepository repository = shop.context.getBean(OrderRepository.class);
        TransactionTemplate tx = new TransactionTemplate(shop.context.getBean(PlatformTransactionManager.class));

        assertThatThrownBy(() -> tx.executeWithoutResult(status -> {
                    Order loaded = repository.findById(order).orElseThrow();
                    OrderVersionCheck.matchVersion(loaded, 0, "test");
                    // Another transaction commits in between (autocommit, outside this transaction).
                    new TransactionTemplate(
                                    shop.context.getBean(PlatformTransactionManager.class),
                                    new org.springframework.transaction.support.DefaultTransactionDefinition(
                                            org.springframework.transaction.TransactionDefinition
                                                    .PROPAGATION_REQUIRES_NEW))
                            .executeWithoutResult(
                                    s -> shop.service.changeShippingInfo("alice", order, 0, address("4 Racer Road")));
                    loaded.startShipping("kim", java.time.Instant.now());
                }))
                .isInstanceOfSatisfying(ObjectOptimisticLockingFailureException.class, e -> {
                    assertThat(OrderVersionCheck.isStaleWrite(e)).isTrue();
                    assertThat(OrderVersionCheck.orderNumberOf(e)).isEqualTo(order);
                });
        assertThat(shop.state(order)).isEqualTo("PREPARING");
        assertThat(shop.address1(order)).isEqualTo("4 Racer Road");
        assertThat(shop.version(order)).isEqualTo(1);
    }
}
