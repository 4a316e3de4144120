package dev.holdfast.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.jdbc.CommitDurability;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.testing.TestDatabase;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.Locale;

/**
 * A cross-check of {@link OfflineLockBenchmark} that is robust to load drifting on a shared
 * machine ({@link Interleaved}): one tryLock+release pair per operation, ratios to the seed.
 * Usage: {@code java -cp benchmarks.jar dev.holdfast.benchmarks.OfflineLockInterleaved <db> <rounds> <pairsPerBlock> <out.json>}.
 */
public final class OfflineLockInterleaved {

    public static void main(String[] args) throws Exception {
        String database = args[0];
        int rounds = Integer.parseInt(args[1]);
        int block = Integer.parseInt(args[2]);
        TestDatabase.Kind kind = TestDatabase.Kind.valueOf(database.toUpperCase(Locale.ROOT));
        String table = "holdfast_bench_offline_ab";
        try (HikariDataSource pool = kind.newPool("bench-offline-ab", 4)) {
            Dialect dialect = Dialect.detect(pool);
            new SchemaInstaller(pool).install(HoldfastTable.OFFLINE_LOCKS, table);
            JdbcLockManager relaxed = JdbcLockManager.builder(pool)
                    .table(table)
                    .durability(CommitDurability.RELAXED)
                    .build();
            JdbcLockManager durable = JdbcLockManager.builder(pool)
                    .table(table)
                    .durability(CommitDurability.DURABLE)
                    .build();
            OfflineLockBenchmark.SeedLockManager seed = new OfflineLockBenchmark.SeedLockManager(pool, dialect, table);
            new Interleaved()
                    .add(
                            "holdfastTryLockReleaseRelaxed",
                            i -> relaxed.releaseLock(relaxed.tryLock("ab_relaxed", "r" + i % 1000, "bench")))
                    .add(
                            "holdfastTryLockReleaseDurable",
                            i -> durable.releaseLock(durable.tryLock("ab_durable", "r" + i % 1000, "bench")))
                    .add("seedTryLockRelease", i -> seed.releaseLock(seed.tryLock("ab_seed", "r" + i % 1000)))
                    .run(database, "seedTryLockRelease", rounds, block, Path.of(args[3]));
            try (Connection c = pool.getConnection();
                    Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS " + table);
            }
        }
    }
}
