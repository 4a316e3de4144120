package dev.holdfast.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.benchmarks.jpa.BenchLine;
import dev.holdfast.benchmarks.jpa.BenchOrder;
import dev.holdfast.hibernate.AggregateRootVersionIntegrator;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.optimistic.Assignments;
import dev.holdfast.optimistic.VersionedTable;
import dev.holdfast.testing.TestDatabase;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import org.hibernate.jpa.HibernatePersistenceConfiguration;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;

/**
 * A drift-robust check of the two overhead ratios beside the JMH runs ({@link Interleaved}):
 * versioned update versus plain update of the same business columns, and a JPA child change with
 * the aggregate-root bump versus plain Hibernate. The plain update prepares its statement per call,
 * as {@code JdbcTemplate} does and as {@code VersionedTable} does; {@code plainUpdateReusedStatement}
 * keeps one statement for the whole run, the floor no statement-per-call library reaches.
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar dev.holdfast.benchmarks.InterleavedOverhead postgresql 21 benchmarks/results</pre>
 */
public final class InterleavedOverhead {

    public static void main(String[] args) throws Exception {
        TestDatabase.Kind kind = TestDatabase.Kind.valueOf(args[0].toUpperCase(Locale.ROOT));
        int rounds = Integer.parseInt(args[1]);
        Path results = Path.of(args[2]);
        Files.createDirectories(results);
        int jdbcOps = kind == TestDatabase.Kind.H2 ? 5000 : 300;
        int jpaOps = kind == TestDatabase.Kind.H2 ? 2000 : 200;
        try (HikariDataSource pool = kind.newPool("interleaved-" + kind.id(), 2)) {
            versionedUpdate(
                    kind,
                    pool,
                    rounds,
                    jdbcOps,
                    results.resolve("versioned-update-interleaved-" + kind.id() + ".json"));
            rootBump(kind, pool, rounds, jpaOps, results.resolve("root-bump-interleaved-" + kind.id() + ".json"));
        }
    }

    private static void versionedUpdate(TestDatabase.Kind kind, HikariDataSource pool, int rounds, int n, Path out)
            throws Exception {
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
                s.execute("INSERT INTO " + table
                        + " (id, street, counter, version) VALUES (1, 'a', 0, 0), (2, 'a', 0, 0), (3, 'a', 0, 0)");
            }
            VersionedTable versioned =
                    VersionedTable.builder(table).dialect(dialect).build();
            long[] state = new long[3]; // version of row 1, counter, version of row 3
            String handWritten =
                    "UPDATE " + table + " SET street = ?, counter = ?, version = version + 1, modified_by = ?,"
                            + " modified = " + dialect.clock() + " WHERE id = ? AND version = ?";
            String sql = "UPDATE " + table + " SET street = ?, counter = ? WHERE id = ?";
            try (PreparedStatement reused = c.prepareStatement(sql)) {
                new Interleaved()
                        .add("plainUpdate", i -> {
                            try (PreparedStatement plain = c.prepareStatement(sql)) {
                                plain.setString(1, "Main 1");
                                plain.setLong(2, ++state[1]);
                                plain.setLong(3, 2L);
                                plain.executeUpdate();
                            }
                        })
                        .add("plainUpdateReusedStatement", i -> {
                            reused.setString(1, "Main 1");
                            reused.setLong(2, ++state[1]);
                            reused.setLong(3, 2L);
                            reused.executeUpdate();
                        })
                        .add("handWrittenVersionedUpdate", i -> {
                            // What a developer writes by hand for the same guarantee: the cost of versioning itself.
                            try (PreparedStatement ps = c.prepareStatement(handWritten)) {
                                ps.setString(1, "Main 1");
                                ps.setLong(2, ++state[1]);
                                ps.setString(3, "bench");
                                ps.setLong(4, 3L);
                                ps.setLong(5, state[2]);
                                if (ps.executeUpdate() != 1) {
                                    throw new IllegalStateException("stale");
                                }
                                state[2]++;
                            }
                        })
                        .add(
                                "holdfastVersionedUpdate",
                                i -> state[0] = versioned.update(
                                        c,
                                        1L,
                                        state[0],
                                        "bench",
                                        Assignments.of("street", "Main 1").and("counter", ++state[1])))
                        .run(kind.id(), "plainUpdate", rounds, n, out);
            }
            try (Statement s = c.createStatement()) {
                s.execute("DROP TABLE " + table);
            }
        }
    }

    private static void rootBump(TestDatabase.Kind kind, HikariDataSource pool, int rounds, int n, Path out)
            throws Exception {
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
            new Interleaved()
                    .add("plainHibernateChildChange", i -> changeLine(without))
                    .add("holdfastRootBumpChildChange", i -> changeLine(with))
                    .run(kind.id(), "plainHibernateChildChange", rounds, n, out);
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
        try (Connection c = pool.getConnection();
                Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS holdfast_bench_opt_line");
            s.execute("DROP TABLE IF EXISTS holdfast_bench_opt_order");
        }
    }
}
