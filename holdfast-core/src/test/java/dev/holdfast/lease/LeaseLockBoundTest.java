package dev.holdfast.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/** {@link LeaseService#lock}'s bound holds whatever the pool does. */
class LeaseLockBoundTest {

    private static final Duration LONG = Duration.ofSeconds(30);

    /**
     * Defect 10: the first {@code lock} on a service, on a pool exhausted for longer than its bound,
     * ends at its bound (not when a connection for the listener or the attempt finally comes).
     */
    @DatabaseTest
    void theFirstLockOnAnExhaustedPoolEndsAtItsBound(TestDatabase db) throws Exception {
        String table = LeaseFixture.install(db);
        HikariDataSource pool = db.newPool(2); // connectionTimeout 10 s
        try (LeaseService a = LeaseFixture.service(db.newPool(2), table);
             LeaseService b = LeaseFixture.service(pool, table)) {
            a.tryAcquire("job", "a", LONG).orElseThrow();
            List<Connection> taken = new ArrayList<>();
            taken.add(pool.getConnection());
            taken.add(pool.getConnection());
            try {
                long start = System.nanoTime();
                Throwable thrown = catchThrowable(() -> b.lock("job", "b", LONG, Duration.ofSeconds(1)));
                long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertThat(thrown).isInstanceOf(LeaseTimeoutException.class);
                assertThat(took).as("a 1 s bound ends before 2.5 s").isLessThan(2500);
            } finally {
                for (Connection c : taken) {
                    c.close();
                }
            }
            // The pool recovers: nothing leaked, the next lock works as usual.
            Thread.sleep(200);
            assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isLessThanOrEqualTo(1); // at most the listener
            Throwable again = catchThrowable(() -> b.lock("job", "b", LONG, Duration.ofMillis(300)));
            assertThat(again).isInstanceOf(LeaseTimeoutException.class);
        }
    }

}
