package dev.holdfast.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.holdfast.benchmarks.jpa.BenchLine;
import dev.holdfast.benchmarks.jpa.BenchOrder;
import dev.holdfast.hibernate.AggregateRootVersionIntegrator;
import dev.holdfast.testing.TestDatabase;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.LockModeType;
import org.hibernate.jpa.HibernatePersistenceConfiguration;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * One JPA transaction that loads an aggregate member (and its root), changes a member field and
 * commits (flush): plain Hibernate (the root's version stays, a lost update is possible), with
 * Holdfast's automatic root bump, and with the manual alternative
 * {@code em.lock(root, OPTIMISTIC_FORCE_INCREMENT)}. The ratio bump/plain is the cost of guarding
 * the whole aggregate.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(1)
public class RootBumpBenchmark {

    @Param({"h2", "postgresql", "mariadb"})
    public String database;

    private HikariDataSource pool;
    private EntityManagerFactory withBump;
    private EntityManagerFactory withoutBump;

    @Setup(Level.Trial)
    public void setUp() throws SQLException {
        TestDatabase.Kind kind = TestDatabase.Kind.valueOf(database.toUpperCase(Locale.ROOT));
        pool = kind.newPool("bench-opt-jpa-" + database, 2);
        dropTables();
        withBump = emf(true, "create");
        withoutBump = emf(false, "none");
        try (EntityManager em = withoutBump.createEntityManager()) {
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
    }

    private EntityManagerFactory emf(boolean bump, String ddl) {
        return new HibernatePersistenceConfiguration("bench-" + bump)
                .managedClasses(BenchOrder.class, BenchLine.class)
                .property("jakarta.persistence.nonJtaDataSource", pool)
                .property("hibernate.hbm2ddl.auto", ddl)
                .property(AggregateRootVersionIntegrator.ENABLED, Boolean.toString(bump))
                .createEntityManagerFactory();
    }

    private void dropTables() throws SQLException {
        try (Connection c = pool.getConnection();
                Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS holdfast_bench_opt_line");
            s.execute("DROP TABLE IF EXISTS holdfast_bench_opt_order");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws SQLException {
        withBump.close();
        withoutBump.close();
        dropTables();
        pool.close();
    }

    private static int changeLine(EntityManagerFactory emf, boolean manualForceIncrement) {
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            BenchLine line = em.find(BenchLine.class, 11L);
            line.quantity++;
            if (manualForceIncrement) {
                em.lock(line.order, LockModeType.OPTIMISTIC_FORCE_INCREMENT);
            }
            em.getTransaction().commit();
            return line.quantity;
        }
    }

    @Benchmark
    public int plainHibernate() {
        return changeLine(withoutBump, false);
    }

    @Benchmark
    public int holdfastRootBump() {
        return changeLine(withBump, false);
    }

    @Benchmark
    public int manualForceIncrement() {
        return changeLine(withoutBump, true);
    }
}
