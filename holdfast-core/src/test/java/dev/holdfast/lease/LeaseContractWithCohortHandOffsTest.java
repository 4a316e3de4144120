package dev.holdfast.lease;

import javax.sql.DataSource;

/** Every rule of the lease contract holds with cohort hand-off on ({@link LeaseService.Builder#cohortHandOffs}). */
class LeaseContractWithCohortHandOffsTest extends LeaseContractTest {

    @Override
    LeaseService service(DataSource dataSource, String table) {
        return LeaseService.builder(dataSource).table(table).cohortHandOffs(8).build();
    }
}
