package dev.holdfast.spring.boot;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseGuard;
import dev.holdfast.lease.LeaseLostException;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Holdfast's {@code System.Logger} lines reach the application's logging (Logback, through SLF4J):
 * acquisitions, refusals and releases at DEBUG, a lost lease at WARN naming the lease, its owner, its
 * token and why, with or without {@code onLost}.
 */
class LeaseLoggingTest {

    private final Logger logger = (Logger) LoggerFactory.getLogger("dev.holdfast.lease");
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
    private Level levelBefore;

    @BeforeEach
    void captureHoldfastsLogs() {
        levelBefore = logger.getLevel();
        logger.setLevel(Level.DEBUG);
        appender.start();
        logger.addAppender(appender);
    }

    @AfterEach
    void stopCapturing() {
        logger.detachAppender(appender);
        logger.setLevel(levelBefore);
    }

    /** What the appender holds now, as "LEVEL message" (it is appended to from other threads). */
    private List<String> lines() {
        synchronized (appender) {
            return appender.list.stream()
                    .map(e -> e.getLevel() + " " + e.getFormattedMessage())
                    .toList();
        }
    }

    private static ApplicationContextRunner runner(TestDatabase db, String table) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(HoldfastAutoConfiguration.class))
                .withBean(
                        DataSource.class, () -> new DelegatingDataSource(db.dataSource())) // the shared pool stays open
                .withPropertyValues(
                        "holdfast.jdbc.initialize-schema=always",
                        "holdfast.lease.table=" + table,
                        "holdfast.offline.table=" + db.newTableName("hf_log_locks"));
    }

    private static String table(TestDatabase db) {
        String table = db.newTableName("hf_log_leases");
        db.dropAfterTest(table + "_queue");
        db.dropAfterTest(table + "_timelines");
        return table;
    }

    @DatabaseTest
    void acquisitionsRefusalsAndReleasesAreLoggedAtDebug(TestDatabase db) {
        runner(db, table(db)).run(context -> {
            LeaseService leases = context.getBean(LeaseService.class);
            Lease lease = leases.tryAcquire("nightly-report", "server-7", Duration.ofMinutes(1))
                    .orElseThrow();
            assertThat(leases.tryAcquire("nightly-report", "server-8", Duration.ofMinutes(1)))
                    .isEmpty();
            leases.release(lease);

            assertThat(lines())
                    .contains(
                            "DEBUG Lease 'nightly-report' acquired by 'server-7' (token " + lease.token() + ", until "
                                    + lease.expiresAt() + ")",
                            "DEBUG Lease 'nightly-report' refused to 'server-8': live under another owner",
                            "DEBUG Lease 'nightly-report' released by 'server-7' (token " + lease.token() + ")");
        });
    }

    @DatabaseTest
    void aLostLeaseIsLoggedAtWarnWithNameOwnerTokenAndWhy(TestDatabase db) {
        runner(db, table(db)).run(context -> {
            LeaseService leases = context.getBean(LeaseService.class);
            Lease lease = leases.tryAcquire("nightly-report", "server-7", Duration.ofSeconds(3))
                    .orElseThrow();
            CountDownLatch started = new CountDownLatch(1);
            // the guard interrupts its worker when the lease is lost: a worker of its own, not the test's thread
            CompletableFuture<Void> worker = CompletableFuture.runAsync(() -> {
                try (LeaseGuard guard = leases.keepAlive(lease, Duration.ofSeconds(3), null)) {
                    started.countDown();
                    new CountDownLatch(1).await(); // works until interrupted by the loss
                } catch (InterruptedException | LeaseLostException expected) {
                    Thread.currentThread().interrupt();
                }
            });
            started.await();
            assertThat(leases.forceRelease("nightly-report", "ops-kim")).isTrue();

            await().atMost(Duration.ofSeconds(30)).until(() -> lines().stream().anyMatch(l -> l.startsWith("WARN")));
            assertThat(lines())
                    .filteredOn(l -> l.startsWith("WARN"))
                    .singleElement()
                    .satisfies(line -> assertThat(line)
                            .contains("Lease 'nightly-report' of 'server-7' (token " + lease.token() + ")")
                            .contains("broken")
                            .contains("ops-kim"));
            worker.join();
        });
    }
}
