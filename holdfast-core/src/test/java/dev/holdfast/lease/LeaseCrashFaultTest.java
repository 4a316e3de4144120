package dev.holdfast.lease;

import dev.holdfast.testing.FaultDatabase;
import dev.holdfast.testing.FaultTest;
import dev.holdfast.testing.TestDatabase;

import java.time.Duration;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A PostgreSQL crash (immediate stop: nothing flushed) right after grants made by an application
 * whose sessions run with {@code synchronous_commit = off} (as a server, database or role may be
 * configured). The library forces its acquires and renewals durable, so after crash recovery the
 * grant and the renewal are there: the next grant's token is greater, and the renewed expiry
 * stands. The WAL writer is slowed to 10 s for the test so that an asynchronous commit is still
 * in memory when the server dies (it would otherwise reach the OS within 200 ms and survive a
 * process crash). MariaDB's flush policy is server-wide ({@code innodb_flush_log_at_trx_commit}),
 * so there is no per-statement switch to test there.
 */
class LeaseCrashFaultTest {

    @FaultTest(only = TestDatabase.Kind.POSTGRESQL)
    void grantsAndRenewalsSurviveACrashWithAsynchronousCommit(FaultDatabase db) throws Exception {
        String table = FaultChecker.installLeases(db);
        DataSource async = LeaseFixture.withSessionSetting(
                db.newPool("async", 2, Duration.ofSeconds(30)), "SET synchronous_commit = off");
        db.execute("ALTER SYSTEM SET wal_writer_delay = '10s'");
        db.execute("SELECT pg_reload_conf()");
        try (LeaseService leases = LeaseService.builder(async).table(table).build();
                LeaseService checker =
                        LeaseService.builder(db.admin()).table(table).build()) {
            Lease first =
                    checker.tryAcquire("job", "first", Duration.ofSeconds(1)).orElseThrow();
            checker.release(first);
            Lease granted =
                    leases.tryAcquire("job", "async", Duration.ofSeconds(2)).orElseThrow();
            Lease renewed = leases.renew(granted, Duration.ofSeconds(60));
            Lease queued = leases.acquire("queued", "async", Duration.ofSeconds(60), Duration.ofSeconds(5));

            db.crash();

            Lease job = checker.find("job").orElseThrow();
            Lease other = checker.find("queued").orElse(null);
            System.out.printf(
                    "[%s] crash with synchronous_commit=off: granted token %d (renewed to %s), after"
                            + " recovery %s; lock() grant %s, after recovery %s%n",
                    db.id(), granted.token(), renewed.expiresAt(), job, queued, other);
            assertThat(job).as("the grant and its renewal survived the crash").isEqualTo(renewed);
            assertThat(other).as("the lock() grant survived the crash").isEqualTo(queued);
            assertThat(checker.tryAcquire("job", "next", Duration.ofSeconds(1)))
                    .as("still held")
                    .isEmpty();
        } finally {
            db.execute("ALTER SYSTEM RESET wal_writer_delay");
            db.execute("SELECT pg_reload_conf()");
        }
    }
}
