package dev.holdfast.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.benchmarks.jpa.BenchLine;
import dev.holdfast.benchmarks.jpa.BenchOrder;
import dev.holdfast.hibernate.AggregateRootVersionIntegrator;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.testing.TestDatabase;
import dev.holdfast.version.Assignments;
import dev.holdfast.version.VersionedTable;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import org.hibernate.jpa.HibernatePersistenceConfiguration;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.function.LongConsumer;

/**
 * A drift-robust check of the two overhead ratios beside the JMH runs: in one JVM, blocks of N
 * plain operations and N Holdfast operations alternate 24 times (the first 4 pairs are warm-up);
 * the ratio is of the median block times. On a shared machine whose load changes by the minute,
 * this compares like with like better than JMH's method-after-method runs.
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar dev.holdfast.benchmarks.InterleavedOverhead postgresql</pre>
 */
public final class InterleavedOverhead {

    private static final int BLOCKS = 24;
    private static final int WARMUP_BLOCKS = 4;

    public static void main(String[] args) throws Exception {
        TestDatabase.Kind kind = TestDatabase.Kind.valueOf(args[0].toUpperCase(Locale.ROOT));
        int jdbcOps = kind == TestDatabase.Kind.H2 ? 5000 : 300;
        int jpaOps = kind == TestDatabase.Kind.H2 ? 2000 : 200;
        try (HikariDataSource pool = kind.newPool("interleaved-" + kind.id(), 2)) {
            versionedUpdate(kind, pool, jdbcOps);
            rootBump(kind, pool, jpaOps);
        }
    }

    private static void versionedUpdate(TestDatabase.Kind kind, HikariDataSource pool, int n) throws SQLException {
        Dialect dialect = Dialect.detect(pool);
        new SchemaInstaller(pool, dialect).installClock();
        String table = "holdfast_bench_opt_interleaved";
        String timestamp = switch (dialect) {
            case H2 -> "TIMESTAMP WITH TIME ZONE";
            case POSTGRESQL -> "TIMESTAMPTZ";
            case MARIADB -> "DATETIME(6)";
        };
        try (Connection c = pool.getConnection()) {
            try (Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS " + table);
                s.execute("CREATE TABLE " + table + " (id BIGINT PRIMARY KEY, street VARCHAR(200), counter BIGINT,"
                        + " version BIGINT NOT NULL, modified_by VARCHAR(100), modified " + timestamp + ")");
                s.execute("INSERT INTO " + table + " (id, street, counter, version) VALUES (1, 'a', 0, 0), (2, 'a', 0, 0)");
            }
            VersionedTable versioned = VersionedTable.builder(table).build(dialect);
            long[] state = new long[2]; // version, counter
            try (PreparedStatement plain = c.prepareStatement("UPDATE " + table + " SET street = ?, counter = ? WHERE id = ?")) {
                report(kind, "versioned update / plain update (auto-commit, 1 row)", n, i -> {
                    try {
                        plain.setString(1, "Main 1");
                        plain.setLong(2, ++state[1]);
                        plain.setLong(3, 2L);
                        plain.executeUpdate();
                    } catch (SQLException e) {
                        throw new IllegalStateException(e);
                    }
                }, i -> state[0] = versioned.update(c, 1L, state[0], "bench",
                        Assignments.of("street", "Main 1").and("counter", ++state[1])));
            }
            try (Statement s = c.createStatement()) {
                s.execute("DROP TABLE " + table);
            }
        }
    }

    private static void rootBump(TestDatabase.Kind kind, HikariDataSource pool, int n) throws SQLException {
        dropJpaTables(pool);
        EntityManagerFactory with = emf(pool, true, "create");
        EntityManagerFactory without = emf(pool, false, "none");
        try {
            try (EntityManager em = without.createEntityManager()) {
                em.getTransaction().begin();
                BenchOrder order = new BenchOrder();
                order.id = 1L;
                order.state = "new";
                em.persist(order);
                BenchLine line = new BenchLine();
                line.id = 11L;
                line.order = order;
                em.persist(line);
                em.getTransaction().commit();
            }
            report(kind, "JPA change child + commit, root bump / plain Hibernate", n, i -> changeLine(without), i -> changeLine(with));
        } finally {
            with.close();
            without.close();
            dropJpaTables(pool);
        }
    }

    private static void changeLine(EntityManagerFactory emf) {
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            em.find(BenchLine.class, 11L).quantity++;
            em.getTransaction().commit();
        }
    }

    private static EntityManagerFactory emf(HikariDataSource pool, boolean bump, String ddl) {
        return new HibernatePersistenceConfiguration("interleaved-" + bump)
                .managedClasses(BenchOrder.class, BenchLine.class)
                .property("jakarta.persistence.nonJtaDataSource", pool)
                .property("hibernate.hbm2ddl.auto", ddl)
                .property(AggregateRootVersionIntegrator.ENABLED, Boolean.toString(bump))
                .createEntityManagerFactory();
    }

    private static void dropJpaTables(HikariDataSource pool) throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS holdfast_bench_opt_line");
            s.execute("DROP TABLE IF EXISTS holdfast_bench_opt_order");
        }
    }

    private static void report(TestDatabase.Kind kind, String what, int n, LongConsumer baseline, LongConsumer holdfast) {
        List<Double> base = new ArrayList<>();
        List<Double> ours = new ArrayList<>();
        for (int block = 0; block < BLOCKS; block++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                baseline.accept(i);
            }
            long t1 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                holdfast.accept(i);
            }
            long t2 = System.nanoTime();
            if (block >= WARMUP_BLOCKS) {
                base.add((t1 - t0) / 1000.0 / n);
                ours.add((t2 - t1) / 1000.0 / n);
            }
        }
        Collections.sort(base);
        Collections.sort(ours);
        double b = base.get(base.size() / 2);
        double o = ours.get(ours.size() / 2);
        System.out.printf(Locale.ROOT, "%-10s %-56s baseline %8.1f us/op  holdfast %8.1f us/op  throughput ratio %.3f (%d blocks x %d)%n",
                kind.id(), what, b, o, b / o, BLOCKS - WARMUP_BLOCKS, n);
    }
}
