package dev.holdfast.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.offline.CommitDurability;
import dev.holdfast.offline.JdbcLockManager;
import dev.holdfast.offline.LockId;
import dev.holdfast.testing.TestDatabase;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A cross-check of {@link OfflineLockBenchmark} that is robust to load drifting on a shared
 * machine: the three implementations run in short alternating blocks (rotating the order), so each
 * sees the same load; the result is the median of the per-block pairs/s and the ratio of medians.
 * Usage: {@code java -cp benchmarks.jar dev.holdfast.benchmarks.OfflineLockInterleaved <db> <rounds> <pairsPerBlock> <out.json>}.
 */
public final class OfflineLockInterleaved {

    private interface Pair {
        void run(String id) throws SQLException;
    }

    public static void main(String[] args) throws Exception {
        String database = args[0];
        int rounds = Integer.parseInt(args[1]);
        int block = Integer.parseInt(args[2]);
        TestDatabase.Kind kind = TestDatabase.Kind.valueOf(database.toUpperCase(Locale.ROOT));
        String table = "holdfast_bench_offline_ab";
        try (HikariDataSource pool = kind.newPool("bench-offline-ab", 4)) {
            Dialect dialect = Dialect.detect(pool);
            new SchemaInstaller(pool).install(HoldfastTable.OFFLINE_LOCKS, table);
            JdbcLockManager relaxed = JdbcLockManager.builder(pool).tableName(table).durability(CommitDurability.RELAXED).build();
            JdbcLockManager durable = JdbcLockManager.builder(pool).tableName(table).durability(CommitDurability.DURABLE).build();
            OfflineLockBenchmark.SeedLockManager seed = new OfflineLockBenchmark.SeedLockManager(pool, dialect, table);
            Map<String, Pair> impls = new LinkedHashMap<>();
            impls.put("holdfastTryLockReleaseRelaxed", id -> relaxed.releaseLock(relaxed.tryLock("ab_relaxed", id, "bench")));
            impls.put("holdfastTryLockReleaseDurable", id -> durable.releaseLock(durable.tryLock("ab_durable", id, "bench")));
            impls.put("seedTryLockRelease", id -> seed.releaseLock(seed.tryLock("ab_seed", id)));
            Map<String, List<Double>> rates = new LinkedHashMap<>();
            impls.keySet().forEach(k -> rates.put(k, new ArrayList<>()));
            List<String> names = new ArrayList<>(impls.keySet());
            int counter = 0;
            for (int round = -2; round < rounds; round++) {   // two warm-up rounds
                for (int k = 0; k < names.size(); k++) {
                    String name = names.get((k + Math.max(round, 0)) % names.size());
                    Pair pair = impls.get(name);
                    long start = System.nanoTime();
                    for (int i = 0; i < block; i++) {
                        pair.run("r" + (counter++ % 1000));
                    }
                    double perSecond = block / ((System.nanoTime() - start) / 1e9);
                    if (round >= 0) {
                        rates.get(name).add(perSecond);
                    }
                }
            }
            try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS " + table);
            }
            double seedMedian = median(rates.get("seedTryLockRelease"));
            StringBuilder json = new StringBuilder("{\n  \"database\": \"" + database + "\", \"rounds\": " + rounds
                    + ", \"pairsPerBlock\": " + block + ", \"threads\": 1,\n  \"results\": [\n");
            for (int k = 0; k < names.size(); k++) {
                String name = names.get(k);
                double median = median(rates.get(name));
                System.out.printf("%s %-32s median %.0f pairs/s, ratio to seed %.2f, blocks %s%n", database, name, median,
                        median / seedMedian, rates.get(name).stream().map(r -> String.format("%.0f", r)).toList());
                json.append("    {\"benchmark\": \"").append(name).append("\", \"medianPairsPerSecond\": ")
                        .append(String.format(Locale.ROOT, "%.1f", median)).append(", \"ratioToSeed\": ")
                        .append(String.format(Locale.ROOT, "%.3f", median / seedMedian)).append(", \"blocks\": ")
                        .append(rates.get(name).stream().map(r -> String.format(Locale.ROOT, "%.1f", r)).toList())
                        .append(k + 1 < names.size() ? "},\n" : "}\n");
            }
            json.append("  ]\n}\n");
            Files.writeString(Path.of(args[3]), json);
        }
    }

    private static double median(List<Double> values) {
        double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return sorted.length % 2 == 1 ? sorted[sorted.length / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
    }
}
