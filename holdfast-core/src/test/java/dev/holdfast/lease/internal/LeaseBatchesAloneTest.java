package dev.holdfast.lease.internal;

import dev.holdfast.jdbc.dialect.Dialect;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Concurrent batching with no other call in flight: a lone call runs the single-row statement it was
 * given, on its caller's thread, as without batching, and is counted as one call and one statement.
 */
class LeaseBatchesAloneTest {

    /** A data source that no call here may use: alone, calls run the functions they were given. */
    private static final DataSource NO_DATABASE = (DataSource) Proxy.newProxyInstance(
            LeaseBatchesAloneTest.class.getClassLoader(), new Class<?>[] {DataSource.class}, (p, m, a) -> {
                throw new AssertionError("a call alone used the batch statements: " + m.getName());
            });

    private static final LeaseStore JDBC = LeaseStores.forDialect(Dialect.POSTGRESQL, "leases");

    @Test
    void aLoneCallRunsItsSingleRowStatementOnItsCallersThreadAndIsCounted() throws Exception {
        List<Thread> ranOn = new CopyOnWriteArrayList<>();
        LeaseBatches batches = new LeaseBatches(
                NO_DATABASE,
                JDBC,
                new LeaseCalls(NO_DATABASE, Dialect.POSTGRESQL, JDBC).races(),
                true,
                4,
                4,
                BatchMode.CONCURRENT,
                a -> {
                    ranOn.add(Thread.currentThread());
                    return Optional.of(
                            new LeaseRow(a.name(), a.owner(), 7, Instant.EPOCH, Instant.EPOCH.plusSeconds(1)));
                },
                r -> {
                    ranOn.add(Thread.currentThread());
                    return true;
                });
        CompletableFuture<Thread> caller = CompletableFuture.supplyAsync(() -> {
            LeaseRow row = batches.acquire("a", "me", 1_000_000).orElseThrow();
            assertThat(batches.release(row.name(), row.owner(), row.token())).isTrue();
            return Thread.currentThread();
        });
        Thread callerThread = caller.get(10, TimeUnit.SECONDS);
        assertThat(ranOn).as("both calls ran on the caller's thread").containsExactly(callerThread, callerThread);
        assertThat(batches.counts())
                .as("acquire calls, statements, release calls, statements")
                .containsExactly(1, 1, 1, 1);
        assertThat(batches.multiRowStatements()).isZero();
        assertThat(batches.batchedCalls()).isZero();
        assertThat(batches.queued()).isZero();
    }
}
