package dev.holdfast.lease;

import javax.sql.DataSource;

/**
 * Every rule of the lease contract holds with concurrent batching ({@link Batching#CONCURRENT}, set
 * explicitly: the default is off), each call sent through the multi-row statements even when alone (a
 * batch of one), so that every rule is checked on them. On H2 batching is off by design: the suite
 * checks that nothing differs.
 */
class LeaseContractBatchedTest extends LeaseContractTest {

    @Override
    LeaseService service(DataSource dataSource, String table) {
        return LeaseService.builder(dataSource)
                .table(table)
                .batching(Batching.CONCURRENT)
                .tune(t -> t.batchLoneCalls(true))
                .build();
    }
}
