package dev.holdfast.lease.internal;

import dev.holdfast.jdbc.ConnectionPool;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/** The connections a MariaDB service keeps for its wake-ups: none stays borrowed when the pool or a connection fails. */
class SpareConnectionsTest {

    /** A pool that fails its {@code failAt}-th request, and a connection that fails {@code setAutoCommit} if told to. */
    private static final class FailingPool {
        final Set<Connection> open = ConcurrentHashMap.newKeySet();
        final AtomicInteger requests = new AtomicInteger();
        final int failAt;
        final boolean autoCommitFails;

        FailingPool(int failAt, boolean autoCommitFails) {
            this.failAt = failAt;
            this.autoCommitFails = autoCommitFails;
        }

        DataSource dataSource() {
            return (DataSource) Proxy.newProxyInstance(
                    getClass().getClassLoader(), new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                        if (!method.getName().equals("getConnection")) {
                            throw new UnsupportedOperationException(method.getName());
                        }
                        if (requests.incrementAndGet() == failAt) {
                            throw new SQLException("the pool failed");
                        }
                        Connection[] self = new Connection[1];
                        self[0] = (Connection) Proxy.newProxyInstance(
                                getClass().getClassLoader(),
                                new Class<?>[] {Connection.class},
                                (p, m, a) -> switch (m.getName()) {
                                    case "close" -> {
                                        open.remove(self[0]);
                                        yield null;
                                    }
                                    case "setAutoCommit" -> {
                                        if (autoCommitFails) {
                                            throw new SQLException("broken connection");
                                        }
                                        yield null;
                                    }
                                    case "hashCode" -> System.identityHashCode(p);
                                    case "toString" -> "connection " + System.identityHashCode(p);
                                    case "equals" -> p == a[0];
                                    default -> throw new UnsupportedOperationException(m.getName());
                                });
                        open.add(self[0]);
                        return self[0];
                    });
        }
    }

    @Test
    void aPoolThatFailsTheSecondOrTheSpareRequestKeepsNothingBorrowed() {
        for (int failAt = 1; failAt <= 3; failAt++) {
            FailingPool pool = new FailingPool(failAt, false);
            SpareConnections spares =
                    new SpareConnections(pool.dataSource(), ConnectionPool.ABORTING, LeaseThreads.SHARED, "t");
            Throwable thrown = catchThrowable(() -> spares.borrow(2));
            assertThat(thrown).as("request %d failed", failAt).isNotNull();
            assertThat(pool.open)
                    .as("request %d failed: every connection given back", failAt)
                    .isEmpty();
        }
    }

    @Test
    void aConnectionThatFailsToTakeAutoCommitKeepsNothingBorrowed() {
        FailingPool pool = new FailingPool(Integer.MAX_VALUE, true);
        SpareConnections spares =
                new SpareConnections(pool.dataSource(), ConnectionPool.ABORTING, LeaseThreads.SHARED, "t");
        assertThat(catchThrowable(() -> spares.borrow(2))).isInstanceOf(SQLException.class);
        assertThat(pool.open).isEmpty();
    }

    @Test
    void twoConnectionsAndASpareAreKeptTwoAndTheSpareGivenBack() throws Exception {
        FailingPool pool = new FailingPool(Integer.MAX_VALUE, false);
        SpareConnections spares =
                new SpareConnections(pool.dataSource(), ConnectionPool.ABORTING, LeaseThreads.SHARED, "t");
        List<Connection> kept = spares.borrow(2);
        assertThat(kept).hasSize(2);
        assertThat(pool.requests).hasValue(3);
        assertThat(pool.open).containsExactlyInAnyOrderElementsOf(kept);
    }
}
