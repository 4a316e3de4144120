package dev.holdfast.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.DatabaseException;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Batched calls ({@code LeaseService.Builder.batching(true)}): calls that arrive while one is in
 * flight share one transaction, and a batch that fails changes nothing. The batches are formed
 * deterministically: the first call is held in flight by a row lock the test holds, until the
 * others have queued. (The contract and stress suites run a second time with batching on.)
 */
class LeaseBatchingTest {

    private static final Duration TTL = Duration.ofSeconds(60);
    private static final List<String> OTHERS = List.of("b", "c", "d", "e", "f");

    /** Counts commits; fails the n-th statement run inside a transaction, or the next commit, on demand. */
    static final class Faults {
        final AtomicLong commits = new AtomicLong();
        final AtomicInteger failStatementInTransaction = new AtomicInteger(-1);
        volatile boolean failCommit;

        DataSource wrap(DataSource target) {
            return (DataSource) proxy(target, DataSource.class, null);
        }

        private Object proxy(Object target, Class<?> type, Connection connection) {
            return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {type}, (p, method, args) -> {
                String m = method.getName();
                if (m.equals("commit")) {
                    if (failCommit) {
                        failCommit = false;
                        throw new SQLTransientConnectionException("injected: commit failed");
                    }
                    commits.incrementAndGet();
                }
                if (m.startsWith("execute") && connection != null && !connection.getAutoCommit()
                        && failStatementInTransaction.getAndDecrement() == 1) {
                    throw new SQLTransientConnectionException("injected: statement failed in a transaction");
                }
                Object result;
                try {
                    result = method.invoke(target, args);
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
                if (m.equals("getConnection")) {
                    return proxy(result, Connection.class, (Connection) result);
                }
                if (m.equals("prepareStatement")) {
                    return proxy(result, PreparedStatement.class, connection);
                }
                return result;
            });
        }
    }

    private record Setup(String table, HikariDataSource pool, Faults faults, LeaseService leases) implements AutoCloseable {
        @Override
        public void close() {
            leases.close();
            pool.close();
        }
    }

    private static Setup setUp(TestDatabase db) {
        String table = LeaseFixture.install(db);
        HikariDataSource pool = db.newPool(8);
        Faults faults = new Faults();
        LeaseService leases = LeaseService.builder(faults.wrap(pool)).table(table).batching(true).build();
        for (String name : List.of("a", "b", "c", "d", "e", "f")) {
            leases.release(leases.tryAcquire(name, "setup", TTL).orElseThrow()); // rows exist: token 1, free
        }
        return new Setup(table, pool, faults, leases);
    }

    /**
     * Holds "a" in flight behind a row lock, queues acquires of b..f behind it, runs {@code whileQueued}, then
     * lets "a" go: returns the five queued calls' outcomes.
     */
    private static List<CompletableFuture<Optional<Lease>>> queueBehindA(TestDatabase db, Setup s, Runnable whileQueued)
            throws Exception {
        CompletableFuture<Optional<Lease>> a;
        List<CompletableFuture<Optional<Lease>>> others = new ArrayList<>();
        try (Connection blocker = db.connection()) {
            blocker.setAutoCommit(false);
            try (PreparedStatement ps = blocker.prepareStatement("SELECT token FROM " + s.table() + " WHERE name = 'a' FOR UPDATE")) {
                ps.executeQuery().close();
            }
            a = CompletableFuture.supplyAsync(() -> s.leases().tryAcquire("a", "owner-a", TTL));
            await(() -> s.leases().batcher().busy(), "the call of 'a' is in flight");
            for (String name : OTHERS) {
                others.add(CompletableFuture.supplyAsync(() -> s.leases().tryAcquire(name, "owner-" + name, TTL),
                        CompletableFuture.delayedExecutor(0, TimeUnit.MILLISECONDS, r -> new Thread(r).start())));
            }
            await(() -> s.leases().batcher().queued() == OTHERS.size(), "the other calls queued");
            whileQueued.run();
            blocker.commit();
        }
        assertThat(a.get(20, TimeUnit.SECONDS)).as("'a' ran alone, after the row lock").isPresent();
        return others;
    }

    @DatabaseTest
    void callsThatArriveWhileOneIsInFlightShareOneCommit(TestDatabase db) throws Exception {
        try (Setup s = setUp(db)) {
            long[] commitsBefore = new long[1];
            List<CompletableFuture<Optional<Lease>>> others = queueBehindA(db, s, () -> commitsBefore[0] = s.faults().commits.get());
            for (int i = 0; i < OTHERS.size(); i++) {
                Lease lease = others.get(i).get(20, TimeUnit.SECONDS).orElseThrow();
                assertThat(lease.name()).isEqualTo(OTHERS.get(i));
                assertThat(lease.owner()).isEqualTo("owner-" + OTHERS.get(i));
                assertThat(lease.token()).isEqualTo(2);
                assertThat(s.leases().find(OTHERS.get(i)).orElseThrow()).isEqualTo(lease);
            }
            assertThat(s.faults().commits.get() - commitsBefore[0]).as("five acquires, one commit").isEqualTo(1);
            // Each call keeps its own result: a refused call in a batch is refused, the others granted.
            assertThat(s.leases().tryAcquire("b", "x", TTL)).isEmpty();
        }
    }

    @DatabaseTest
    void aBatchWhoseStatementFailsIsRolledBackAndItsCallsRunAgainAlone(TestDatabase db) throws Exception {
        try (Setup s = setUp(db)) {
            // The third statement of the batch fails, after two acquires ran in its transaction.
            List<CompletableFuture<Optional<Lease>>> others = queueBehindA(db, s,
                    () -> s.faults().failStatementInTransaction.set(3));
            for (int i = 0; i < OTHERS.size(); i++) {
                Lease lease = others.get(i).get(20, TimeUnit.SECONDS).orElseThrow();
                assertThat(lease.token()).as("granted once: the rolled-back grants left no trace").isEqualTo(2);
            }
            assertThat(s.faults().failStatementInTransaction.get()).as("the failure was injected").isLessThan(1);
        }
    }

    @DatabaseTest
    void aBatchWhoseCommitFailsReportsEveryCallFailedAndGrantsNothing(TestDatabase db) throws Exception {
        try (Setup s = setUp(db)) {
            List<CompletableFuture<Optional<Lease>>> others = queueBehindA(db, s, () -> s.faults().failCommit = true);
            for (CompletableFuture<Optional<Lease>> call : others) {
                assertThat(call).failsWithin(20, TimeUnit.SECONDS).withThrowableOfType(ExecutionException.class)
                        .havingCause().isInstanceOf(DatabaseException.class).withMessageContaining("committing 5 lease calls");
            }
            assertThat(s.faults().failCommit).as("the failure was injected").isFalse();
            for (String name : OTHERS) {
                assertThat(s.leases().find(name).orElseThrow().token()).as(name + " was not granted").isEqualTo(1);
            }
            assertThat(s.leases().find("a").orElseThrow().owner()).isEqualTo("owner-a");
        }
    }

    private static void await(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what).isLessThan(deadline);
            Thread.sleep(2);
        }
    }
}
