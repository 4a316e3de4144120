package dev.holdfast.lease;

import javax.sql.DataSource;

/** Every rule of the lease contract holds with cohort hand-off on ({@link LeaseService.Builder#localHandOffs}). */
class LeaseContractWithLocalHandOffsTest extends LeaseContractTest {

    @Override
    LeaseService service(DataSource dataSource, String table) {
        return LeaseService.builder(dataSource).table(table).localHandOffs(8).build();
    }
}
