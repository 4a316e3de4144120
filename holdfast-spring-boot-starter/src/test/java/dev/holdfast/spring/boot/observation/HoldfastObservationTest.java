package dev.holdfast.spring.boot.observation;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.lease.LeaseTimeoutException;
import dev.holdfast.lease.Leases;
import dev.holdfast.optimistic.StaleRow;
import dev.holdfast.optimistic.VersionConflictException;
import dev.holdfast.optimistic.VersionStamp;
import dev.holdfast.pessimistic.LockTimeoutException;
import dev.holdfast.pessimistic.LockWait;
import dev.holdfast.pessimistic.PessimisticLocks;
import dev.holdfast.pessimistic.RowRef;
import dev.holdfast.pessimistic.offline.AlreadyLockedException;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.pessimistic.offline.LockId;
import dev.holdfast.pessimistic.offline.LockManager;
import dev.holdfast.spring.boot.HoldfastAutoConfiguration;
import dev.holdfast.spring.boot.OfflineLockHeldException;
import dev.holdfast.spring.boot.RowLockTimeoutException;
import dev.holdfast.spring.boot.metrics.HoldfastMetricsAutoConfiguration;
import dev.holdfast.spring.boot.metrics.MeteredLockManager;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import io.micrometer.common.KeyValue;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.dao.CannotAcquireLockException;

import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The observations of every technique, on H2, PostgreSQL and MariaDB, through the auto-configured beans and a
 * {@link TestObservationRegistry}: names, low- and high-cardinality keys and outcomes for success, refusal or
 * timeout, and error; the hand-off of a lease to a notified waiter on PostgreSQL; and, through Boot's own
 * registry with a meter handler, the timers beside the existing meters, each call counted once.
 */
class HoldfastObservationTest {

    private static ApplicationContextRunner runner(DataSource pool, String locksTable, String leasesTable) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        HoldfastAutoConfiguration.class,
                        HoldfastMetricsAutoConfiguration.class,
                        HoldfastObservationAutoConfiguration.class))
                .withBean(DataSource.class, () -> pool)
                .withPropertyValues(
                        "holdfast.jdbc.initialize-schema=always",
                        "holdfast.offline.table=" + locksTable,
                        "holdfast.lease.table=" + leasesTable);
    }

    /** Keeps every observation that stopped, in order. */
    static final class Stopped implements ObservationHandler<Observation.Context> {
        final List<Observation.Context> contexts = new CopyOnWriteArrayList<>();

        @Override
        public void onStop(Observation.Context context) {
            contexts.add(context);
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return true;
        }
    }

    /** A registry that checks each observation's lifecycle (TestObservationRegistry) and keeps the stopped ones. */
    private static TestObservationRegistry registry(Stopped stopped) {
        TestObservationRegistry registry = TestObservationRegistry.create();
        registry.observationConfig().observationHandler(stopped);
        return registry;
    }

    /** The key values of the last stopped observation named {@code name}, low and high cardinality together. */
    private static Map<String, String> last(Stopped stopped, String name) {
        List<Observation.Context> contexts =
                stopped.contexts.stream().filter(c -> name.equals(c.getName())).toList();
        assertThat(contexts).as("stopped observations named " + name).isNotEmpty();
        Observation.Context context = contexts.get(contexts.size() - 1);
        Map<String, String> keys = context.getLowCardinalityKeyValues().stream()
                .collect(Collectors.toMap(KeyValue::getKey, KeyValue::getValue));
        context.getHighCardinalityKeyValues().forEach(k -> keys.put("high:" + k.getKey(), k.getValue()));
        if (context.getError() != null) {
            keys.put("error", context.getError().getClass().getSimpleName());
        }
        return keys;
    }

    private static String unique(String prefix) {
        return prefix + "_" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static long count(Stopped stopped, String name) {
        return stopped.contexts.stream().filter(c -> name.equals(c.getName())).count();
    }

    @DatabaseTest
    void rowLocksAreObserved(TestDatabase db) throws Exception {
        String orders = db.newTableName("hf_obs_orders");
        db.execute("CREATE TABLE " + orders + " (order_no VARCHAR(20) PRIMARY KEY, note VARCHAR(50))");
        db.execute("INSERT INTO " + orders + " VALUES ('A-1', 'x')");
        Stopped stopped = new Stopped();
        TestObservationRegistry registry = registry(stopped);
        try (HikariDataSource pool = db.newPool(4)) {
            runner(pool, db.newTableName("hf_obs_locks"), db.newTableName("hf_obs_leases"))
                    .withBean(ObservationRegistry.class, () -> registry)
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        PessimisticLocks locks = context.getBean(PessimisticLocks.class);
                        RowRef row = RowRef.of(orders, "order_no", "A-1");
                        try (Connection c = pool.getConnection()) {
                            c.setAutoCommit(false);
                            assertThat(locks.forUpdate(c, row, LockWait.atMost(Duration.ofSeconds(3))))
                                    .isTrue();
                            c.commit();
                        }
                        Map<String, String> locked = last(stopped, "holdfast.pessimistic.lock");
                        assertThat(locked)
                                .containsEntry("holdfast.technique", "pessimistic")
                                .containsEntry("holdfast.outcome", "locked")
                                .containsEntry("db.system", db.id())
                                .containsEntry("holdfast.table", orders)
                                .containsEntry("holdfast.lock.wait", "bounded")
                                .containsEntry("high:holdfast.lock.name", row.toString())
                                .doesNotContainKey("error");

                        try (Connection c = pool.getConnection()) {
                            c.setAutoCommit(false);
                            assertThat(locks.forUpdate(c, RowRef.of(orders, "order_no", "none"), LockWait.skipLocked()))
                                    .isFalse();
                            c.commit();
                        }
                        assertThat(last(stopped, "holdfast.pessimistic.lock"))
                                .containsEntry("holdfast.outcome", "absent")
                                .containsEntry("holdfast.lock.wait", "skip_locked");

                        // Another transaction holds the row: no-wait and a bounded wait both time out.
                        try (Connection holder = pool.getConnection();
                                Connection c = pool.getConnection()) {
                            holder.setAutoCommit(false);
                            locks.forUpdate(holder, row, LockWait.atMost(Duration.ofSeconds(3)));
                            c.setAutoCommit(false);
                            assertThatThrownBy(() -> locks.forUpdate(c, row, LockWait.noWait()))
                                    .isInstanceOf(RowLockTimeoutException.class)
                                    .cause()
                                    .isInstanceOf(LockTimeoutException.class);
                            assertThat(last(stopped, "holdfast.pessimistic.lock"))
                                    .containsEntry("holdfast.outcome", "timeout")
                                    .containsEntry("holdfast.lock.wait", "no_wait")
                                    .containsEntry("error", "LockTimeoutException");
                            assertThatThrownBy(() -> locks.forUpdate(c, row, LockWait.atMost(Duration.ofMillis(300))))
                                    .isInstanceOf(RowLockTimeoutException.class)
                                    .cause()
                                    .isInstanceOf(LockTimeoutException.class);
                            assertThat(last(stopped, "holdfast.pessimistic.lock"))
                                    .containsEntry("holdfast.outcome", "timeout")
                                    .containsEntry("holdfast.lock.wait", "bounded");
                            holder.rollback();
                        }

                        // A table that does not exist: a database error, observed as one.
                        try (Connection c = pool.getConnection()) {
                            c.setAutoCommit(false);
                            assertThatThrownBy(() -> locks.forUpdate(
                                            c,
                                            RowRef.of(orders + "_missing", "order_no", "A-1"),
                                            LockWait.atMost(Duration.ofSeconds(1))))
                                    .isInstanceOf(org.springframework.dao.DataAccessException.class)
                                    .hasRootCauseInstanceOf(
                                            java.sql.SQLException.class); // the bean's exceptions are Spring's
                        }
                        assertThat(last(stopped, "holdfast.pessimistic.lock"))
                                .containsEntry("holdfast.outcome", "error")
                                .containsEntry("error", "DatabaseException");
                        assertThat(count(stopped, "holdfast.pessimistic.lock")).isEqualTo(6); // the holder's lock too
                        // Every observation ended: none is left open, in scope or not.
                        assertThat(registry.getCurrentObservation()).isNull();
                    });
        }
    }

    @DatabaseTest
    void offlineLocksAreObserved(TestDatabase db) throws Exception {
        String locksTable = db.newTableName("hf_obs_locks");
        Stopped stopped = new Stopped();
        TestObservationRegistry registry = registry(stopped);
        try (HikariDataSource pool = db.newPool(4)) {
            runner(pool, locksTable, db.newTableName("hf_obs_leases"))
                    .withBean(ObservationRegistry.class, () -> registry)
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        LockManager locks = context.getBean(LockManager.class);
                        assertThat(locks)
                                .isSameAs(
                                        context.getBean(JdbcLockManager.class)); // one bean, observed by its decorator
                        LockId id = locks.tryLock("purchase_order", "A-1", "kim");
                        assertThat(last(stopped, "holdfast.offline.lock"))
                                .containsEntry("holdfast.technique", "offline")
                                .containsEntry("holdfast.operation", "try_lock")
                                .containsEntry("holdfast.outcome", "acquired")
                                .containsEntry("db.system", db.id())
                                .containsEntry("holdfast.lock.type", "purchase_order")
                                .containsEntry("high:holdfast.lock.name", "purchase_order:A-1");

                        assertThatThrownBy(() -> locks.tryLock("purchase_order", "A-1", "admin"))
                                .isInstanceOf(OfflineLockHeldException.class)
                                .cause()
                                .isInstanceOf(AlreadyLockedException.class);
                        assertThat(last(stopped, "holdfast.offline.lock"))
                                .containsEntry("holdfast.outcome", "refused")
                                .containsEntry("error", "AlreadyLockedException");

                        // Bad input: a typed error, observed, and nothing written.
                        long rows = db.queryLong("SELECT COUNT(*) FROM " + locksTable);
                        assertThatThrownBy(() -> locks.tryLock("purchase_order", "", "kim"))
                                .isInstanceOf(IllegalArgumentException.class);
                        assertThat(last(stopped, "holdfast.offline.lock"))
                                .containsEntry("holdfast.outcome", "error")
                                .containsEntry("error", "IllegalArgumentException");
                        assertThat(db.queryLong("SELECT COUNT(*) FROM " + locksTable))
                                .isEqualTo(rows);

                        locks.reacquire("purchase_order", "A-1", "kim");
                        assertThat(last(stopped, "holdfast.offline.lock"))
                                .containsEntry("holdfast.operation", "reacquire")
                                .containsEntry("holdfast.outcome", "acquired");
                        long observed = count(stopped, "holdfast.offline.lock");
                        locks.checkLock(locks.tryLock("purchase_order", "B-1", "kim"), "purchase_order", "B-1", "kim");
                        assertThat(count(stopped, "holdfast.offline.lock"))
                                .isEqualTo(observed + 1); // the check is not observed
                        assertThat(id).isNotNull();
                    });
        }
    }

    @DatabaseTest
    void leasesAreObserved(TestDatabase db) throws Exception {
        String leasesTable = db.newTableName("hf_obs_leases");
        db.dropAfterTest(leasesTable + "_queue");
        Stopped stopped = new Stopped();
        TestObservationRegistry registry = registry(stopped);
        try (HikariDataSource pool = db.newPool(4)) {
            runner(pool, db.newTableName("hf_obs_locks"), leasesTable)
                    .withBean(ObservationRegistry.class, () -> registry)
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        Leases leases = context.getBean(Leases.class);
                        assertThat(leases).isSameAs(context.getBean(LeaseService.class));
                        Lease held = leases.tryAcquire("nightly", "server-1", Duration.ofMinutes(1))
                                .orElseThrow();
                        assertThat(last(stopped, "holdfast.lease.acquire"))
                                .containsEntry("holdfast.technique", "lease")
                                .containsEntry("holdfast.operation", "try_acquire")
                                .containsEntry("holdfast.outcome", "acquired")
                                .containsEntry("holdfast.lease.grant", "own_statement")
                                .containsEntry("db.system", db.id())
                                .containsEntry("high:holdfast.lock.name", "nightly");

                        assertThat(leases.tryAcquire("nightly", "server-2", Duration.ofMinutes(1)))
                                .isEmpty();
                        assertThat(last(stopped, "holdfast.lease.acquire"))
                                .containsEntry("holdfast.outcome", "refused")
                                .containsEntry("holdfast.lease.grant", "none")
                                .doesNotContainKey("error");

                        assertThatThrownBy(() -> leases.acquire(
                                        "nightly", "server-2", Duration.ofMinutes(1), Duration.ofMillis(200)))
                                .isInstanceOf(CannotAcquireLockException.class)
                                .cause()
                                .isInstanceOf(LeaseTimeoutException.class);
                        assertThat(last(stopped, "holdfast.lease.acquire"))
                                .containsEntry("holdfast.operation", "acquire")
                                .containsEntry("holdfast.outcome", "timeout")
                                .containsEntry("holdfast.lease.grant", "none")
                                .containsEntry("error", "LeaseTimeoutException");

                        assertThatThrownBy(() -> leases.tryAcquire("other", "server-2", Duration.ZERO))
                                .isInstanceOf(IllegalArgumentException.class);
                        assertThat(last(stopped, "holdfast.lease.acquire"))
                                .containsEntry("holdfast.outcome", "error")
                                .containsEntry("high:holdfast.lock.name", "other");
                        assertThat(leases.find("other")).isEmpty();

                        leases.release(held);
                        assertThat(leases.tryAcquireOrRenew("nightly", "server-2", Duration.ofMinutes(1)))
                                .isPresent();
                        assertThat(last(stopped, "holdfast.lease.acquire"))
                                .containsEntry("holdfast.operation", "try_acquire_or_renew")
                                .containsEntry("holdfast.outcome", "acquired");
                        assertThat(registry.getCurrentObservation()).isNull();
                    });
        }
    }

    /** PostgreSQL hands a released lease to the first waiter and notifies it: the waiter's observation says so. */
    @DatabaseTest
    void aHandOffIsObservedOnPostgresql(TestDatabase db) throws Exception {
        if (db.kind() != TestDatabase.Kind.POSTGRESQL) {
            return; // H2 and MariaDB waiters poll: their grant is their own statement's
        }
        String leasesTable = db.newTableName("hf_obs_handoff");
        db.dropAfterTest(leasesTable + "_queue");
        Stopped stopped = new Stopped();
        TestObservationRegistry registry = registry(stopped);
        try (HikariDataSource pool = db.newPool(6)) {
            runner(pool, db.newTableName("hf_obs_locks"), leasesTable)
                    .withBean(ObservationRegistry.class, () -> registry)
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        Leases leases = context.getBean(Leases.class);
                        Lease held = leases.tryAcquire("handoff", "server-1", Duration.ofMinutes(1))
                                .orElseThrow();
                        CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(() -> {
                            try {
                                return leases.acquire(
                                        "handoff", "server-2", Duration.ofMinutes(1), Duration.ofSeconds(20));
                            } catch (InterruptedException e) {
                                throw new IllegalStateException(e);
                            }
                        });
                        await().atMost(Duration.ofSeconds(10))
                                .until(() -> db.queryLong("SELECT COUNT(*) FROM " + leasesTable + "_queue") == 1);
                        leases.release(held);
                        Lease handed = waiter.get(20, TimeUnit.SECONDS);
                        assertThat(handed.owner()).isEqualTo("server-2");
                        assertThat(last(stopped, "holdfast.lease.acquire"))
                                .containsEntry("holdfast.operation", "acquire")
                                .containsEntry("holdfast.outcome", "acquired")
                                .containsEntry("holdfast.lease.grant", "handed_off")
                                .containsEntry("db.system", "postgresql")
                                .containsEntry("high:holdfast.lock.name", "handoff");
                    });
        }
    }

    @Test
    void versionConflictsAreObservedOnePerStaleRow() {
        Stopped stopped = new Stopped();
        TestObservationRegistry registry = registry(stopped);
        VersionConflictObservations observations =
                new VersionConflictObservations(registry, dev.holdfast.jdbc.dialect.Dialect.H2);
        VersionConflictException conflict = new VersionConflictException(List.of(
                StaleRow.changed("order", "A-1", 6, new VersionStamp(7, "kim", Instant.parse("2026-11-21T14:03:00Z"))),
                StaleRow.deleted("order_line", 12L, 3)));
        observations.onConflict(conflict);
        assertThat(count(stopped, "holdfast.version.conflict")).isEqualTo(2);
        List<Map<String, String>> all = stopped.contexts.stream()
                .map(c -> {
                    Map<String, String> keys = c.getLowCardinalityKeyValues().stream()
                            .collect(Collectors.toMap(KeyValue::getKey, KeyValue::getValue));
                    c.getHighCardinalityKeyValues().forEach(k -> keys.put("high:" + k.getKey(), k.getValue()));
                    return keys;
                })
                .toList();
        assertThat(all.get(0))
                .containsEntry("holdfast.technique", "optimistic")
                .containsEntry("holdfast.outcome", "changed")
                .containsEntry("holdfast.entity", "order")
                .containsEntry("db.system", "h2")
                .containsEntry("high:holdfast.lock.name", "order:A-1");
        assertThat(all.get(1))
                .containsEntry("holdfast.outcome", "deleted")
                .containsEntry("holdfast.entity", "order_line")
                .containsEntry("high:holdfast.lock.name", "order_line:12");
        new VersionConflictObservations(ObservationRegistry.NOOP, dev.holdfast.jdbc.dialect.Dialect.H2)
                .record(conflict);
    }

    /** A convention bean replaces the default: here it renames the lease observation and adds a key. */
    @Test
    void aConventionBeanReplacesTheDefault() throws Exception {
        Stopped stopped = new Stopped();
        TestObservationRegistry registry = registry(stopped);
        try (HikariDataSource pool = TestDatabase.Kind.H2.newPool("obs-convention", 4)) {
            runner(pool, unique("hf_obs_conv_locks"), unique("hf_obs_conv_leases"))
                    .withBean(ObservationRegistry.class, () -> registry)
                    .withBean(LeaseObservationConvention.class, () -> new DefaultLeaseObservationConvention() {
                        @Override
                        public String getName() {
                            return "shop.lease";
                        }

                        @Override
                        public io.micrometer.common.KeyValues getLowCardinalityKeyValues(
                                HoldfastObservationContext context) {
                            return super.getLowCardinalityKeyValues(context).and("shop.region", "eu");
                        }
                    })
                    .run(context -> {
                        assertThat(context.getBean(Leases.class)
                                        .tryAcquire("nightly", "server-1", Duration.ofMinutes(1)))
                                .isPresent();
                        assertThat(last(stopped, "shop.lease"))
                                .containsEntry("shop.region", "eu")
                                .containsEntry("holdfast.outcome", "acquired");
                        assertThat(count(stopped, "holdfast.lease.acquire")).isZero();
                    });
        }
    }

    /**
     * Boot's own registry with a meter handler: the observations become timers, and the existing meters keep
     * counting, each call once (the metered decorators wrap the observed ones).
     */
    @Test
    void bootsRegistryGivesTimersBesideTheExistingMetersWithoutDoubleCounting() throws Exception {
        MeterRegistry meterRegistry = new SimpleMeterRegistry();
        try (HikariDataSource pool = TestDatabase.Kind.H2.newPool("obs-boot", 4)) {
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(
                            ObservationAutoConfiguration.class,
                            HoldfastAutoConfiguration.class,
                            HoldfastMetricsAutoConfiguration.class,
                            HoldfastObservationAutoConfiguration.class,
                            org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration.class))
                    .withBean(DataSource.class, () -> pool)
                    .withBean(MeterRegistry.class, () -> meterRegistry)
                    .withPropertyValues(
                            "holdfast.jdbc.initialize-schema=always",
                            "holdfast.offline.table=" + unique("hf_obs_boot_locks"),
                            "holdfast.lease.table=" + unique("hf_obs_boot_leases"))
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        MeterRegistry meters = context.getBean(MeterRegistry.class);
                        Leases leases = context.getBean(Leases.class);
                        LockManager locks = context.getBean(LockManager.class);

                        assertThat(leases.tryAcquire("nightly", "server-1", Duration.ofMinutes(1)))
                                .isPresent();
                        assertThat(leases.tryAcquire("nightly", "server-2", Duration.ofMinutes(1)))
                                .isEmpty();
                        locks.tryLock("purchase_order", "A-1", "kim");

                        assertThat(meters.get("holdfast.lease.acquisitions")
                                        .counter()
                                        .count())
                                .isEqualTo(1);
                        assertThat(meters.get("holdfast.lease.refusals")
                                        .counter()
                                        .count())
                                .isEqualTo(1);
                        assertThat(meters.get("holdfast.lease.acquire")
                                        .tags(
                                                "holdfast.outcome",
                                                "acquired",
                                                "db.system",
                                                "h2",
                                                "holdfast.lease.grant",
                                                "own_statement",
                                                "error",
                                                "none")
                                        .timer()
                                        .count())
                                .isEqualTo(1);
                        assertThat(meters.get("holdfast.lease.acquire")
                                        .tags("holdfast.outcome", "refused")
                                        .timer()
                                        .count())
                                .isEqualTo(1);
                        assertThat(meters.get(MeteredLockManager.ACQUISITIONS)
                                        .counter()
                                        .count())
                                .isEqualTo(1);
                        assertThat(meters.get("holdfast.offline.lock")
                                        .tags("holdfast.outcome", "acquired")
                                        .timer()
                                        .count())
                                .isEqualTo(1);
                        assertThat(meters.get(MeteredLockManager.HELD).gauge().value())
                                .isEqualTo(1);
                        // the lock name is high cardinality: never a tag of the timer
                        assertThat(meters.get("holdfast.lease.acquire").timers())
                                .allSatisfy(t -> assertThat(t.getId().getTag("holdfast.lock.name"))
                                        .isNull());

                        PessimisticLocks rowLocks = context.getBean(PessimisticLocks.class);
                        String rows = unique("hf_obs_boot_rows");
                        try (Connection c = pool.getConnection()) {
                            c.createStatement().execute("CREATE TABLE " + rows + " (id BIGINT PRIMARY KEY)");
                            c.setAutoCommit(false);
                            rowLocks.forUpdate(c, RowRef.of(rows, "id", 1L), LockWait.noWait());
                            c.commit();
                        }
                        assertThat(meters.get("holdfast.pessimistic.lock")
                                        .tags("holdfast.outcome", "absent")
                                        .timer()
                                        .count())
                                .isEqualTo(1);
                        // the observation's timer is the one timing: the meters count timeouts only
                        assertThat(meters.find("holdfast.pessimistic.lock.wait").meters())
                                .isEmpty();
                    });
        }
    }

    /** Off by property, or without an ObservationRegistry: the beans are what they were. */
    @Test
    void offByPropertyOrWithoutARegistry() throws Exception {
        try (HikariDataSource pool = TestDatabase.Kind.H2.newPool("obs-off", 4)) {
            runner(pool, unique("hf_obs_off_locks"), unique("hf_obs_off_leases"))
                    .withBean(ObservationRegistry.class, TestObservationRegistry::create)
                    .withPropertyValues("holdfast.observations.enabled=false")
                    .run(context -> {
                        assertThat(context)
                                .doesNotHaveBean("holdfastObservedLeases")
                                .doesNotHaveBean(PessimisticLockObservations.class);
                        assertThat(context.getBean(Leases.class)).isInstanceOf(LeaseService.class);
                    });
        }
        try (HikariDataSource pool = TestDatabase.Kind.H2.newPool("obs-none", 4)) {
            runner(pool, unique("hf_obs_off_locks"), unique("hf_obs_off_leases"))
                    .run(context -> {
                        assertThat(context).hasNotFailed().doesNotHaveBean("holdfastObservedLockManager");
                    });
        }
    }
}
