package dev.holdfast.lease;

import java.time.Duration;
import javax.sql.DataSource;

/**
 * Every rule of the lease contract holds with batched commits on ({@link Batching}),
 * each call sent through the multi-row statements even when alone (a batch of one), so that every
 * rule is checked on them, and in lockstep (acquires and releases sharing one statement in flight,
 * a batch waiting up to 1 ms for the threads the last one answered), which may change only when a
 * batch starts. On H2 batching is off by design: the suite checks that nothing differs.
 */
class LeaseContractBatchedTest extends LeaseContractTest {

    @Override
    LeaseService service(DataSource dataSource, String table) {
        return LeaseService.builder(dataSource).table(table).batching(Batching.lockstep(Duration.ofMillis(1)))
                .tune(t -> t.batchLoneCalls(true)).build();
    }
}
