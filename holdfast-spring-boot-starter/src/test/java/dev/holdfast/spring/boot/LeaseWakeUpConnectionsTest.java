package dev.holdfast.spring.boot;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.jdbc.ConnectionPool;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

import static dev.holdfast.lease.LeaseInternals.probe;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The auto-configured {@link LeaseService} on a HikariCP pool, on MariaDB: its wake-up connections, retired after
 * every burst of hand-offs, leave the pool evicted, without a single warning of HikariCP's (an aborted connection is
 * logged as "marked as broken", with a stack trace, each time).
 */
class LeaseWakeUpConnectionsTest {

    private static final Duration LONG = Duration.ofSeconds(30);
    private static final Duration AT_MOST = Duration.ofSeconds(30);
    /** HikariCP's reason when a connection is closed by {@code evictConnection}. */
    private static final String EVICTED = "(connection evicted by user)";

    @DatabaseTest(only = TestDatabase.Kind.MARIADB)
    void handOffsThroughAHikariPoolRetireTheWakeUpConnectionsWithoutAPoolWarning(TestDatabase db) throws Exception {
        String leases = db.newTableName("hf_sb_wake_leases");
        db.dropAfterTest(leases + "_queue");
        Logger hikariLog = (Logger) LoggerFactory.getLogger("com.zaxxer.hikari");
        Level level = hikariLog.getLevel();
        ListAppender<ILoggingEvent> events = new ListAppender<>();
        events.start();
        hikariLog.addAppender(events);
        hikariLog.setLevel(Level.DEBUG); // the pool says at DEBUG why it closes each connection
        AtomicLong retired = new AtomicLong();
        try (HikariDataSource pool = db.newPool(8)) {
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(HoldfastAutoConfiguration.class))
                    .withBean(DataSource.class, () -> pool)
                    .withPropertyValues(
                            "holdfast.jdbc.initialize-schema=always",
                            "holdfast.lease.table=" + leases,
                            "holdfast.offline.table=" + db.newTableName("hf_sb_wake_locks"))
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        assertThat(context.getBean(ConnectionPool.class)).isInstanceOf(HikariConnectionPool.class);
                        LeaseService service = context.getBean(LeaseService.class);
                        for (int burst = 1; burst <= 3; burst++) {
                            handOffs(service, 4, 15);
                            long atLeast = 2L * burst;
                            // a second without waiting calls, and the service retires its two connections
                            await("the wake-up connections retired")
                                    .atMost(AT_MOST)
                                    .pollInterval(Duration.ofMillis(20))
                                    .until(() -> !probe(service).wakeUpWatching()
                                            && probe(service).wakeUpConnectionsRetired() >= atLeast);
                        }
                        retired.set(probe(service).wakeUpConnectionsRetired());
                    });
            await("the pool closed each retired connection")
                    .atMost(AT_MOST)
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> closed(events, "") >= retired.get());
        } finally {
            hikariLog.detachAppender(events);
            hikariLog.setLevel(level);
        }
        assertThat(events.list.stream()
                        .filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN))
                        .map(ILoggingEvent::getFormattedMessage))
                .as("HikariCP's warnings")
                .isEmpty();
        assertThat(retired.get()).as("wake-up connections retired").isGreaterThanOrEqualTo(6);
        assertThat(closed(events, EVICTED)).as("closed by the pool as evicted").isEqualTo(retired.get());
    }

    /** Without HikariCP on the classpath, the lease service keeps its default: the connections are aborted. */
    @Test
    void withoutHikariTheLeaseServiceKeepsItsDefault() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(HoldfastAutoConfiguration.class))
                .withClassLoader(new FilteredClassLoader(HikariDataSource.class))
                .withBean(
                        DataSource.class,
                        () -> new SimpleDriverDataSource(new org.h2.Driver(), "jdbc:h2:mem:hf_no_hikari"))
                .withPropertyValues("holdfast.jdbc.initialize-schema=always")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(LeaseService.class);
                    assertThat(context).doesNotHaveBean(ConnectionPool.class);
                });
    }

    /** A data source that is no HikariCP pool, nor wraps one, gets the aborting default. */
    @Test
    void aDataSourceThatIsNoHikariPoolIsAborting() {
        assertThat(HikariConnectionPool.of(new SimpleDriverDataSource())).isSameAs(ConnectionPool.ABORTING);
    }

    /** How many connections the pool said it closed, for a reason that contains {@code reason}. */
    private static long closed(ListAppender<ILoggingEvent> events, String reason) {
        return events.list.stream()
                .map(ILoggingEvent::getFormattedMessage)
                .filter(m -> m.contains(" - Closing connection ") && m.contains(reason))
                .count();
    }

    /** {@code threads} threads acquire and release one name {@code each} times, each holding it 1 ms. */
    private static void handOffs(LeaseService leases, int threads, int each) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<CompletableFuture<Void>> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String owner = "w" + t;
                workers.add(CompletableFuture.runAsync(
                        () -> {
                            for (int n = 0; n < each; n++) {
                                try {
                                    Lease lease = leases.acquire("job", owner, LONG, LONG);
                                    Thread.sleep(1);
                                    leases.release(lease);
                                } catch (InterruptedException e) {
                                    Thread.currentThread().interrupt();
                                    throw new IllegalStateException(e);
                                }
                            }
                        },
                        pool));
            }
            CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(2, TimeUnit.MINUTES);
        } finally {
            pool.shutdownNow();
        }
    }
}
