package dev.holdfast.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.lease.internal.LeaseRow;
import dev.holdfast.lease.internal.LeaseStore;
import dev.holdfast.lease.internal.LeaseStores;
import dev.holdfast.testing.TestDatabase;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;

/**
 * What one multi-row statement costs against the single-row statements it replaces, on one thread
 * and one connection (no queueing): the acquire and release of n leases as two batch statements, then
 * as n single-row acquire + release pairs, n = 1, 4, 8, 16, three passes. Usage: {@code java -cp
 * benchmarks.jar dev.holdfast.benchmarks.LeaseBatchStatements <db> <iterations>}.
 */
public final class LeaseBatchStatements {
    public static void main(String[] args) throws Exception {
        TestDatabase.Kind kind = TestDatabase.Kind.valueOf(args[0].toUpperCase());
        int iterations = Integer.parseInt(args[1]);
        String table = "holdfast_bench_batch_stmt";
        try (HikariDataSource pool = kind.newPool("probe", 2)) {
            try (var c = pool.getConnection();
                    var s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS " + table);
                s.execute("DROP TABLE IF EXISTS " + table + "_queue");
            }
            new SchemaInstaller(pool).install(HoldfastTable.LEASES, table);
            LeaseStore jdbc = LeaseStores.forDialect(Dialect.valueOf(kind.name()), table);
            for (int rep = 0; rep < 3; rep++) {
                for (int n : new int[] {1, 4, 8, 16}) {
                    List<LeaseStore.Acquire> acquires = new ArrayList<>();
                    for (int i = 0; i < n; i++) {
                        acquires.add(new LeaseStore.Acquire(String.format("n%02d", i), "o", 60_000_000));
                    }
                    try (Connection c = pool.getConnection()) {
                        long batched = 0, single = 0, acquiring = 0;
                        for (int it = 0; it < iterations; it++) {
                            long t0 = System.nanoTime();
                            var granted = jdbc.acquireAll(c, acquires);
                            acquiring += System.nanoTime() - t0;
                            List<LeaseStore.Release> releases = acquires.stream()
                                    .map(a -> new LeaseStore.Release(
                                            a.name(), "o", granted.get(a.name()).token()))
                                    .toList();
                            jdbc.releaseAll(c, releases, true);
                            long t1 = System.nanoTime();
                            for (LeaseStore.Acquire a : acquires) {
                                LeaseRow l = jdbc.acquire(c, a.name(), "o", a.ttlMicros(), false)
                                        .orElseThrow();
                                jdbc.release(c, a.name(), "o", l.token(), true, null);
                            }
                            long t2 = System.nanoTime();
                            batched += t1 - t0;
                            single += t2 - t1;
                        }
                        System.out.printf(
                                "%s n=%d: batch pair %.1f us (acquire %.1f; %.1f us per lease), %d single pairs %.1f us (%.1f per lease); ratio %.2f%n",
                                kind,
                                n,
                                batched / 1e3 / iterations,
                                acquiring / 1e3 / iterations,
                                batched / 1e3 / iterations / n,
                                n,
                                single / 1e3 / iterations,
                                single / 1e3 / iterations / n,
                                (double) single / batched);
                    }
                }
            }
        }
    }
}
