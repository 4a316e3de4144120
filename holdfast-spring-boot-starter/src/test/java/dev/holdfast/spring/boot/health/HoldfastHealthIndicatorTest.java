package dev.holdfast.spring.boot.health;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseGuard;
import dev.holdfast.lease.LeaseLostException;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.spring.boot.HoldfastAutoConfiguration;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@code holdfast} health indicator on every database: UP with the schema, how waiting calls are
 * woken (which differs by database) and the leases lost; DOWN when the tables are missing or the
 * database cannot be reached; off with {@code management.health.holdfast.enabled=false}.
 */
class HoldfastHealthIndicatorTest {

    private static ApplicationContextRunner runner(TestDatabase db, String leasesTable) {
        db.dropAfterTest(leasesTable + "_queue");
        db.dropAfterTest(leasesTable + "_timelines");
        return new ApplicationContextRunner()
                .withConfiguration(
                        AutoConfigurations.of(HoldfastAutoConfiguration.class, HoldfastHealthAutoConfiguration.class))
                .withBean(
                        DataSource.class, () -> new DelegatingDataSource(db.dataSource())) // the shared pool stays open
                .withPropertyValues(
                        "holdfast.lease.table=" + leasesTable,
                        "holdfast.offline.table=" + db.newTableName("hf_health_locks"));
    }

    private static Health health(org.springframework.context.ApplicationContext context) {
        return context.getBean(HoldfastHealthIndicator.class).health(true);
    }

    @DatabaseTest
    void upWithTheSchemaHowWaitersAreWokenAndTheLeasesLost(TestDatabase db) {
        runner(db, db.newTableName("hf_health_leases"))
                .withPropertyValues("holdfast.jdbc.initialize-schema=always")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasBean("holdfastHealthIndicator");
                    Health health = health(context);
                    assertThat(health.getStatus()).isEqualTo(Status.UP);
                    assertThat(health.getDetails())
                            .containsEntry("schema", "present and current")
                            .containsEntry("database", db.kind().id())
                            .containsEntry("leasesLost", 0L)
                            .doesNotContainKey("lastLoss");
                    String wakeUps = (String) health.getDetails().get("wakeUps");
                    switch (db.kind()) {
                        case H2 -> assertThat(wakeUps).isEqualTo("in-process");
                        case POSTGRESQL ->
                            assertThat(wakeUps)
                                    .isEqualTo(
                                            "polling: the listener starts with the"
                                                    + " first waiting acquire, or is reconnecting (see the dev.holdfast.lease log)");
                        case MARIADB -> assertThat(wakeUps).startsWith("polling: the wake-up connection opens");
                    }

                    LeaseService leases = context.getBean(LeaseService.class);
                    if (db.kind() == TestDatabase.Kind.POSTGRESQL) {
                        // a waiting acquire starts the listener: from then on waiters are notified
                        Lease held = leases.tryAcquire("handed", "a", Duration.ofMinutes(1))
                                .orElseThrow();
                        CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(() -> {
                            try {
                                return leases.acquire("handed", "b", Duration.ofMinutes(1), Duration.ofSeconds(30));
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                                throw new IllegalStateException(e);
                            }
                        });
                        await().atMost(Duration.ofSeconds(30))
                                .until(() -> "notified (LISTEN)"
                                        .equals(health(context).getDetails().get("wakeUps")));
                        leases.release(held);
                        assertThat(waiter.join().owner()).isEqualTo("b");
                    }

                    loseALease(leases);
                    await().atMost(Duration.ofSeconds(30))
                            .until(() -> health(context)
                                    .getDetails()
                                    .get("leasesLost")
                                    .equals(1L));
                    Health afterLoss = health(context);
                    assertThat(afterLoss.getStatus()).isEqualTo(Status.UP);
                    assertThat((String) afterLoss.getDetails().get("lastLoss"))
                            .contains("Lease 'nightly-report' of" + " 'server-7'")
                            .contains("ops-kim");
                    assertThat(afterLoss.getDetails()).containsKey("lastLossAt");
                });
    }

    /** A kept-alive lease broken by an operator: its guard finds it lost at the next renewal. */
    private static void loseALease(LeaseService leases) throws InterruptedException {
        Lease lease = leases.tryAcquire("nightly-report", "server-7", Duration.ofSeconds(3))
                .orElseThrow();
        CountDownLatch started = new CountDownLatch(1);
        CompletableFuture.runAsync(() -> {
            try (LeaseGuard guard = leases.keepAlive(lease, Duration.ofSeconds(3), null)) {
                started.countDown();
                new CountDownLatch(1).await(); // works until interrupted by the loss
            } catch (InterruptedException | LeaseLostException expected) {
                Thread.currentThread().interrupt();
            }
        });
        started.await();
        assertThat(leases.forceRelease("nightly-report", "ops-kim")).isTrue();
    }

    @DatabaseTest
    void downWhenTheTablesAreMissing(TestDatabase db) {
        String leasesTable = db.newTableName("hf_health_leases");
        runner(db, leasesTable)
                .withPropertyValues("holdfast.jdbc.initialize-schema=never", "holdfast.jdbc.schema-check=false")
                .run(context -> {
                    Health health = health(context);
                    assertThat(health.getStatus()).isEqualTo(Status.DOWN);
                    assertThat(health.getDetails().get("schema"))
                            .asString()
                            .contains("table " + leasesTable + " is missing");
                });
    }

    @DatabaseTest
    void offWhenTheApplicationSaysSo(TestDatabase db) {
        runner(db, db.newTableName("hf_health_leases"))
                .withPropertyValues(
                        "holdfast.jdbc.initialize-schema=always", "management.health.holdfast.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(HoldfastHealthIndicator.class));
    }

    @Test
    void downWhenTheDatabaseCannotBeReached() {
        try (HikariDataSource nowhere = new HikariDataSource()) {
            nowhere.setJdbcUrl("jdbc:postgresql://127.0.0.1:1/none"); // nothing listens on port 1
            nowhere.setConnectionTimeout(250);
            nowhere.setInitializationFailTimeout(-1);
            Health health = new HoldfastHealthIndicator(
                            nowhere, Dialect.POSTGRESQL, Map.of(HoldfastTable.LEASES, "holdfast_leases"), null)
                    .health(true);
            assertThat(health.getStatus()).isEqualTo(Status.DOWN);
            assertThat(health.getDetails().get("error")).asString().startsWith("the database cannot be reached");
        }
    }
}
