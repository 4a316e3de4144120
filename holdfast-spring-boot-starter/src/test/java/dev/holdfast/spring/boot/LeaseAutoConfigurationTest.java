package dev.holdfast.spring.boot;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.lease.Batching;
import dev.holdfast.lease.BatchingStats;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseGuard;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.optimistic.StaleRow;
import dev.holdfast.optimistic.VersionConflictException;
import dev.holdfast.optimistic.VersionStamp;
import dev.holdfast.spring.boot.metrics.HoldfastMetricsAutoConfiguration;
import dev.holdfast.spring.boot.metrics.LeaseBatchingMetrics;
import dev.holdfast.spring.boot.metrics.VersionConflictCounter;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.OptimisticLockingFailureException;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

import static dev.holdfast.lease.LeaseInternals.probe;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The auto-configured {@link LeaseService} on H2, PostgreSQL and MariaDB: its table installed at
 * startup under the configured name, leases granted with increasing fencing tokens, and the Micrometer
 * counters for acquisitions, refusals and losses; the version-conflict translation and counter.
 */
class LeaseAutoConfigurationTest {

    private static double count(MeterRegistry r, String name, String... tags) {
        var counter = r.find(name).tags(tags).counter();
        return counter == null ? 0 : counter.count();
    }

    @DatabaseTest
    void leaseServiceOnTheConfiguredTableWithMetrics(TestDatabase db) throws Exception {
        String leasesTable = db.newTableName("hf_sb_leases");
        db.dropAfterTest(leasesTable + "_queue");
        String locksTable = db.newTableName("hf_sb_locks");
        try (HikariDataSource pool = db.newPool(4)) {
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(
                            HoldfastAutoConfiguration.class,
                            HoldfastMetricsAutoConfiguration.class,
                            org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration.class))
                    .withBean(DataSource.class, () -> pool)
                    .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                    .withPropertyValues(
                            "holdfast.jdbc.initialize-schema=always",
                            "holdfast.offline.table=" + locksTable,
                            "holdfast.lease.table=" + leasesTable,
                            "holdfast.lease.durability=durable")
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        LeaseService service = context.getBean(LeaseService.class);
                        assertThat(service.table()).isEqualTo(leasesTable);
                        dev.holdfast.lease.Leases leases = context.getBean(dev.holdfast.lease.Leases.class);
                        assertThat(leases).isSameAs(service);
                        MeterRegistry registry = context.getBean(MeterRegistry.class);

                        Lease first = leases.tryAcquire("nightly", "server-1", Duration.ofMinutes(1))
                                .orElseThrow();
                        assertThat(leases.tryAcquire("nightly", "server-2", Duration.ofMinutes(1)))
                                .isEmpty();
                        assertThat(db.queryLong("SELECT COUNT(*) FROM " + leasesTable))
                                .isEqualTo(1);
                        assertThat(registry.get("holdfast.leases.held").gauge().value())
                                .isEqualTo(1);
                        service.release(first);
                        Lease second = leases.tryAcquire("nightly", "server-2", Duration.ofMinutes(1))
                                .orElseThrow();
                        assertThat(second.token()).isGreaterThan(first.token());

                        // An operator breaks the kept-alive lease: the guard sees the loss, the counter counts it.
                        // (the guard interrupts its worker thread on loss, so the worker is a thread of its own)
                        CountDownLatch lost = new CountDownLatch(1);
                        CountDownLatch guarding = new CountDownLatch(1);
                        Thread worker = new Thread(() -> {
                            LeaseGuard guard = leases.keepAlive(
                                    second, Duration.ofMillis(1500), e -> lost.countDown()); // renewals may be late
                            guarding.countDown();
                            try {
                                Thread.sleep(30_000); // the work under the lease, until the guard interrupts it
                            } catch (InterruptedException expected) {
                                // interrupted by the guard: the lease is lost
                            }
                            assertThat(guard.isValid()).isFalse();
                            try {
                                guard.close();
                            } catch (RuntimeException expected) {
                                // LeaseLostException
                            }
                        });
                        worker.start();
                        assertThat(guarding.await(10, TimeUnit.SECONDS)).isTrue();
                        assertThat(service.forceRelease("nightly")).isTrue();
                        assertThat(lost.await(10, TimeUnit.SECONDS)).isTrue();
                        worker.join(10_000);
                        assertThat(worker.isAlive()).isFalse();

                        assertThat(count(registry, "holdfast.lease.acquisitions"))
                                .isEqualTo(2);
                        assertThat(count(registry, "holdfast.lease.refusals", "reason", "held"))
                                .isEqualTo(1);
                        assertThat(count(registry, "holdfast.lease.losses")).isEqualTo(1);
                        assertThat(pool.getHikariPoolMXBean().getActiveConnections())
                                .isLessThanOrEqualTo(1); // PG listener
                    });
        }
    }

    /**
     * {@code holdfast.lease.cohort-hand-offs}: a release passes the lease to the instance's waiting call
     * of the same owner; the row then shows the top of the reserved block of tokens.
     */
    @DatabaseTest(only = TestDatabase.Kind.H2)
    void cohortHandOffsAreConfigured(TestDatabase db) throws Exception {
        String leasesTable = db.newTableName("hf_sb_leases");
        db.dropAfterTest(leasesTable + "_queue");
        try (HikariDataSource pool = db.newPool(4)) {
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(HoldfastAutoConfiguration.class))
                    .withBean(DataSource.class, () -> pool)
                    .withPropertyValues(
                            "holdfast.jdbc.initialize-schema=always",
                            "holdfast.lease.table=" + leasesTable,
                            "holdfast.lease.cohort-hand-offs=4")
                    .run(context -> {
                        LeaseService leases = context.getBean(LeaseService.class);
                        Lease first = leases.tryAcquire("nightly", "server-1", Duration.ofMinutes(1))
                                .orElseThrow();
                        java.util.concurrent.CompletableFuture<Lease> next =
                                new java.util.concurrent.CompletableFuture<>();
                        Thread waiter = new Thread(() -> {
                            try {
                                next.complete(leases.acquire(
                                        "nightly", "server-1", Duration.ofMinutes(1), Duration.ofSeconds(20)));
                            } catch (Throwable e) {
                                next.completeExceptionally(e);
                            }
                        });
                        waiter.start();
                        // It waits in memory (in the cohort, not in the database's queue, which stays empty).
                        await().atMost(Duration.ofSeconds(30))
                                .pollInterval(Duration.ofMillis(5))
                                .untilAsserted(() -> assertThat(java.util.Arrays.stream(waiter.getStackTrace())
                                                .anyMatch(f -> f.getClassName()
                                                                .equals("dev.holdfast.lease.internal.CohortHandOffs")
                                                        && f.getMethodName().equals("await")))
                                        .as("the second call waits in the instance's cohort")
                                        .isTrue());
                        assertThat(db.queryLong("SELECT COUNT(*) FROM " + leasesTable + "_queue"))
                                .isZero();
                        leases.release(first);
                        Lease second = next.get(10, TimeUnit.SECONDS);
                        assertThat(second.token()).isEqualTo(first.token() + 1);
                        assertThat(leases.find("nightly").orElseThrow().token())
                                .as("the top of the block")
                                .isEqualTo(first.token() + 4);
                        leases.release(second);
                    });
        }
    }

    /**
     * {@code holdfast.lease.batching}: while one tryAcquire's statement is in flight (held here), a
     * second call of the instance waits to go in the next batch instead of sending its own.
     */
    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void batchingIsConfigured(TestDatabase db) throws Exception {
        String leasesTable = db.newTableName("hf_sb_leases");
        db.dropAfterTest(leasesTable + "_queue");
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch open = new CountDownLatch(1);
        try (HikariDataSource pool = db.newPool(4)) {
            DataSource stallsFirstAcquire = stallingFirst(pool, "INSERT INTO " + leasesTable, entered, open);
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(HoldfastAutoConfiguration.class))
                    .withBean(DataSource.class, () -> stallsFirstAcquire)
                    .withPropertyValues(
                            "holdfast.jdbc.initialize-schema=always",
                            "holdfast.lease.table=" + leasesTable,
                            "holdfast.lease.batching=concurrent")
                    .run(context -> {
                        LeaseService leases = context.getBean(LeaseService.class);
                        var first = java.util.concurrent.CompletableFuture.supplyAsync(
                                () -> leases.tryAcquire("a", "server-1", Duration.ofMinutes(1)));
                        assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
                        Thread[] second = new Thread[1];
                        var next = new java.util.concurrent.CompletableFuture<Optional<Lease>>();
                        second[0] = new Thread(
                                () -> next.complete(leases.tryAcquire("b", "server-1", Duration.ofMinutes(1))));
                        second[0].start();
                        await().atMost(Duration.ofSeconds(30))
                                .pollInterval(Duration.ofMillis(5))
                                .untilAsserted(() -> assertThat(java.util.Arrays.stream(second[0].getStackTrace())
                                                        .anyMatch(f -> f.getClassName()
                                                                        .equals("dev.holdfast.lease.internal.Batcher")
                                                                && f.getMethodName()
                                                                        .equals("submit"))
                                                && second[0].getState() == Thread.State.WAITING)
                                        .as("the second call waits for the next batch")
                                        .isTrue());
                        open.countDown();
                        assertThat(first.get(10, TimeUnit.SECONDS)).isPresent();
                        assertThat(next.get(10, TimeUnit.SECONDS)).isPresent();
                    });
        }
    }

    /**
     * {@link LeaseBatchingMetrics}: the meters of batching and cohort hand-off exist from the start and
     * count what the service did: each batched call and its statement per kind, each lease passed on in memory.
     */
    @DatabaseTest(only = {TestDatabase.Kind.POSTGRESQL, TestDatabase.Kind.MARIADB})
    void batchingAndCohortMetersExistAndMove(TestDatabase db) throws Exception {
        String leasesTable = db.newTableName("hf_sb_leases");
        db.dropAfterTest(leasesTable + "_queue");
        try (HikariDataSource pool = db.newPool(4)) {
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(
                            HoldfastAutoConfiguration.class,
                            HoldfastMetricsAutoConfiguration.class,
                            org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration.class))
                    .withBean(DataSource.class, () -> pool)
                    .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                    .withPropertyValues(
                            "holdfast.jdbc.initialize-schema=always",
                            "holdfast.lease.table=" + leasesTable,
                            "holdfast.lease.batching=concurrent",
                            "holdfast.lease.cohort-hand-offs=4")
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        MeterRegistry registry = context.getBean(MeterRegistry.class);
                        LeaseService leases = context.getBean(LeaseService.class);
                        for (String kind : java.util.List.of("acquire", "release")) {
                            assertThat(functionCount(registry, LeaseBatchingMetrics.CALLS, "kind", kind))
                                    .isZero();
                            assertThat(functionCount(registry, LeaseBatchingMetrics.STATEMENTS, "kind", kind))
                                    .isZero();
                        }
                        assertThat(functionCount(registry, LeaseBatchingMetrics.COHORT_HANDOFFS))
                                .isZero();

                        leases.release(leases.tryAcquire("a", "srv", Duration.ofMinutes(1))
                                .orElseThrow());
                        Lease held = leases.tryAcquire("job", "srv", Duration.ofMinutes(1))
                                .orElseThrow();
                        var waiter = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                            try {
                                return leases.acquire("job", "srv", Duration.ofMinutes(1), Duration.ofSeconds(30));
                            } catch (InterruptedException e) {
                                throw new IllegalStateException(e);
                            }
                        });
                        await().atMost(Duration.ofSeconds(30))
                                .pollInterval(Duration.ofMillis(5))
                                .until(() -> probe(leases).cohortWaiters("job", "srv") == 1);
                        leases.release(held);
                        leases.release(waiter.get(10, TimeUnit.SECONDS));

                        assertThat(functionCount(registry, LeaseBatchingMetrics.CALLS, "kind", "acquire"))
                                .isEqualTo(2);
                        assertThat(functionCount(registry, LeaseBatchingMetrics.STATEMENTS, "kind", "acquire"))
                                .isEqualTo(2);
                        assertThat(functionCount(registry, LeaseBatchingMetrics.CALLS, "kind", "release"))
                                .as("'a', and 'job' once the cohort passed it on")
                                .isEqualTo(2);
                        assertThat(functionCount(registry, LeaseBatchingMetrics.STATEMENTS, "kind", "release"))
                                .isEqualTo(2);
                        assertThat(functionCount(registry, LeaseBatchingMetrics.COHORT_HANDOFFS))
                                .isEqualTo(1);
                    });
        }
    }

    private static double functionCount(MeterRegistry r, String name, String... tags) {
        var counter = r.find(name).tags(tags).functionCounter();
        assertThat(counter).as(name + " registered").isNotNull();
        return counter.count();
    }

    /**
     * {@code holdfast.lease.batching}: off by default, where batching would apply (PostgreSQL, MariaDB): the
     * service builds no batching machinery and counts nothing; {@code concurrent} is taken as such and
     * builds it.
     */
    @DatabaseTest(only = {TestDatabase.Kind.POSTGRESQL, TestDatabase.Kind.MARIADB})
    void batchingIsOffByDefaultAndEachModeIsTaken(TestDatabase db) {
        String leasesTable = db.newTableName("hf_sb_leases");
        db.dropAfterTest(leasesTable + "_queue");
        for (Batching batching : Batching.values()) {
            try (HikariDataSource pool = db.newPool(2)) { // a context closes its pool
                ApplicationContextRunner runner = new ApplicationContextRunner()
                        .withConfiguration(AutoConfigurations.of(HoldfastAutoConfiguration.class))
                        .withBean(DataSource.class, () -> pool)
                        .withPropertyValues(
                                "holdfast.jdbc.initialize-schema=always", "holdfast.lease.table=" + leasesTable);
                if (batching != Batching.OFF) {
                    runner = runner.withPropertyValues(
                            "holdfast.lease.batching=" + batching.name().toLowerCase(java.util.Locale.ROOT));
                }
                runner.run(context -> {
                    LeaseService leases = context.getBean(LeaseService.class);
                    assertThat(leases.batching())
                            .as(batching == Batching.OFF ? "the default" : "as set")
                            .isEqualTo(batching);
                    assertThat(probe(leases).batching())
                            .as(batching + ": batching machinery built")
                            .isEqualTo(batching != Batching.OFF);
                    leases.release(leases.tryAcquire("a", "server-1", Duration.ofMinutes(1))
                            .orElseThrow());
                    if (batching == Batching.OFF) {
                        assertThat(leases.batchingStats())
                                .as("nothing went through batches")
                                .isEqualTo(new BatchingStats(0, 0, 0, 0, 0));
                    }
                });
            }
        }
    }

    /**
     * {@code holdfast.lease.batching=adaptive} (a mode that was removed) fails startup at binding, and Boot's own
     * failure analysis names the property, its value and the values it takes.
     */
    @Test
    void aRemovedBatchingModeFailsStartupNamingTheValidValues() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(HoldfastAutoConfiguration.class))
                .withBean(DataSource.class, org.h2.jdbcx.JdbcDataSource::new)
                .withPropertyValues("holdfast.lease.batching=adaptive")
                .run(context -> {
                    assertThat(context).hasFailed();
                    Throwable failure = context.getStartupFailure();
                    assertThat(failure)
                            .rootCause()
                            .hasMessageContaining("No enum constant dev.holdfast.lease.Batching.adaptive");
                    FailureAnalysis analysis = analysis(failure);
                    assertThat(analysis.getDescription())
                            .contains("Failed to bind properties under 'holdfast.lease.batching'")
                            .contains("Value: \"adaptive\"");
                    assertThat(analysis.getAction())
                            .contains("The following values are valid")
                            .contains("CONCURRENT")
                            .contains("OFF")
                            .doesNotContain("ADAPTIVE");
                });
    }

    /** What Boot's failure analyzers (those it builds without arguments) report for {@code failure}. */
    private static FailureAnalysis analysis(Throwable failure) {
        java.util.List<FailureAnalyzer> analyzers = SpringFactoriesLoader.forDefaultResourceLocation(
                        LeaseAutoConfigurationTest.class.getClassLoader())
                .load(FailureAnalyzer.class, null, (type, name, e) -> {});
        return analyzers.stream()
                .map(a -> a.analyze(failure))
                .filter(java.util.Objects::nonNull)
                .findFirst()
                .orElseThrow(() -> new AssertionError("no failure analysis for " + failure));
    }

    /** A data source whose first statement containing {@code sql} waits for {@code open} once it has {@code entered}. */
    private static DataSource stallingFirst(
            DataSource target, String sql, CountDownLatch entered, CountDownLatch open) {
        ClassLoader loader = LeaseAutoConfigurationTest.class.getClassLoader();
        java.util.concurrent.atomic.AtomicBoolean stalled = new java.util.concurrent.atomic.AtomicBoolean();
        return (DataSource) java.lang.reflect.Proxy.newProxyInstance(
                loader, new Class<?>[] {DataSource.class}, (p, m, a) -> {
                    Object result = invoke(target, m, a);
                    if (!(result instanceof java.sql.Connection c)) {
                        return result;
                    }
                    return java.lang.reflect.Proxy.newProxyInstance(
                            loader, new Class<?>[] {java.sql.Connection.class}, (p2, m2, a2) -> {
                                Object made = invoke(c, m2, a2);
                                if (!(made instanceof java.sql.PreparedStatement ps)
                                        || !((String) a2[0]).startsWith(sql)) {
                                    return made;
                                }
                                return java.lang.reflect.Proxy.newProxyInstance(
                                        loader, new Class<?>[] {java.sql.PreparedStatement.class}, (p3, m3, a3) -> {
                                            if (m3.getName().startsWith("execute") && !stalled.getAndSet(true)) {
                                                entered.countDown();
                                                open.await(10, TimeUnit.SECONDS);
                                            }
                                            return invoke(ps, m3, a3);
                                        });
                            });
                });
    }

    private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause();
        }
    }

    @Test
    void versionConflictsBecomeOptimisticLockingFailuresWithTheCauseKeptAndAreCounted() {
        VersionConflictException conflict = new VersionConflictException(StaleRow.changed(
                "order", "ORD-1", 6, new VersionStamp(7, "kim", Instant.parse("2026-11-21T14:03:00Z"))));
        DataAccessException translated = new HoldfastExceptionTranslator().translateExceptionIfPossible(conflict);
        assertThat(translated)
                .isInstanceOf(StaleVersionException.class)
                .isInstanceOf(OptimisticLockingFailureException.class);
        assertThat(translated.getCause()).isSameAs(conflict);
        assertThat(translated.getMessage())
                .isEqualTo("order ORD-1 was modified by kim at 2026-11-21 14:03 UTC (version 7, you had 6)");

        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        VersionConflictCounter counter = new VersionConflictCounter(registry);
        counter.onConflict(conflict);
        counter.onConflict(new VersionConflictException(java.util.List.of(
                StaleRow.deleted("order", "ORD-2", 1),
                StaleRow.changed("address", 5L, 1, new VersionStamp(2, "bob", null)))));
        assertThat(count(registry, "holdfast.version.conflicts", "entity", "order", "kind", "changed"))
                .isEqualTo(1);
        assertThat(count(registry, "holdfast.version.conflicts", "entity", "order", "kind", "deleted"))
                .isEqualTo(1);
        assertThat(count(registry, "holdfast.version.conflicts", "entity", "address"))
                .isEqualTo(1);
        assertThat(Optional.ofNullable(
                        registry.find("holdfast.version.conflicts").counter()))
                .isPresent();
    }
}
