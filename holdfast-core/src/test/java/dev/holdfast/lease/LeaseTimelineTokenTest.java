package dev.holdfast.lease;

import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.lease.internal.LeaseStores;
import dev.holdfast.lease.internal.PgLeaseSql;
import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * PostgreSQL tokens carry the server's timeline as a floor, {@code (timeline - 1) << 40}, read in the
 * acquire statement; within one timeline they count as before. (A promotion, which raises the
 * timeline, is exercised by {@link LeaseFailoverTest} on a real primary and standby.)
 */
class LeaseTimelineTokenTest {

    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void theFloorIsTheCurrentTimelineAndTokensCountOnFromIt(TestDatabase db) throws Exception {
        long timeline = db.queryLong("SELECT timeline_id FROM pg_control_checkpoint()");
        long floor = db.queryLong("SELECT " + PgLeaseSql.FIRST_TOKEN);
        assertThat(floor).isEqualTo((timeline - 1) << PgLeaseSql.TIMELINE_SHIFT);

        String table = LeaseFixture.install(db);
        try (LeaseService leases = LeaseFixture.service(db.dataSource(), table)) {
            Lease first = leases.tryAcquire("job", "a", Duration.ofMinutes(1)).orElseThrow();
            assertThat(first.token()).isEqualTo(Math.max(1, floor));
            leases.release(first);
            Lease second = leases.tryAcquire("job", "b", Duration.ofMinutes(1)).orElseThrow();
            assertThat(second.token()).isEqualTo(first.token() + 1);
            leases.release(second);

            // a row from a later epoch than this server's (as after a restore onto an older
            // timeline) keeps counting from its own token: tokens never go back
            long later = floor + (5L << PgLeaseSql.TIMELINE_SHIFT) + 7;
            db.execute("UPDATE " + table + " SET token = ? WHERE name = 'job'", later);
            Lease third = leases.tryAcquire("job", "c", Duration.ofMinutes(1)).orElseThrow();
            assertThat(third.token()).isEqualTo(later + 1);
            leases.release(third);

            // the blocking acquire (queue form) takes the same floor
            Lease fourth = leases.acquire("other", "d", Duration.ofMinutes(1), Duration.ofSeconds(1));
            assertThat(fourth.token()).isEqualTo(Math.max(1, floor));
        }
    }

    @DatabaseTest(only = TestDatabase.Kind.POSTGRESQL)
    void theFloorNeedsNoPrivilegeBeyondTheTable(TestDatabase db) throws Exception {
        // pg_current_wal_lsn() and pg_walfile_name() are executable by PUBLIC
        try (Connection c = db.connection();
                var s = c.createStatement();
                var rs = s.executeQuery("SELECT bool_and(has_function_privilege('public', p.oid, 'EXECUTE'))"
                        + " FROM pg_proc p WHERE p.proname IN ('pg_current_wal_lsn', 'pg_walfile_name')")) {
            rs.next();
            assertThat(rs.getBoolean(1)).isTrue();
        }
        assertThat(LeaseStores.forDialect(Dialect.POSTGRESQL, "t").sql().acquireSql(false))
                .contains(PgLeaseSql.FIRST_TOKEN);
    }
}
