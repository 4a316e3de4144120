package dev.holdfast.hibernate;

import dev.holdfast.testing.TestDatabase;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import org.hibernate.boot.model.naming.Identifier;
import org.hibernate.boot.model.naming.PhysicalNamingStrategyStandardImpl;
import org.hibernate.engine.jdbc.env.spi.JdbcEnvironment;
import org.hibernate.jpa.HibernatePersistenceConfiguration;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;
import javax.sql.DataSource;

/**
 * Plain JPA bootstrap for tests: the test aggregate on a given pool, its tables renamed to names
 * from {@link TestDatabase#newTableName} (so parallel runs never share a table) and created at start.
 */
final class Jpa {

    /** Children first: the matrix drops tables in this order after the test. */
    private static final String[] TABLES = {"hf_note", "hf_line_note", "hf_order_tag", "hf_line", "hf_order"};

    final EntityManagerFactory emf;
    final Map<String, String> tables = new LinkedHashMap<>();

    Jpa(TestDatabase db, DataSource pool, boolean rootBump) {
        for (String table : TABLES) {
            tables.put(table, db.newTableName(table));
        }
        emf = configuration(pool, tables, rootBump, "create").createEntityManagerFactory();
    }

    static HibernatePersistenceConfiguration configuration(
            DataSource pool, Map<String, String> tables, boolean rootBump, String ddl) {
        return new HibernatePersistenceConfiguration("holdfast-test")
                .managedClasses(PurchaseOrder.class, OrderLine.class, OrderNote.class)
                .property("jakarta.persistence.nonJtaDataSource", pool)
                .property("hibernate.physical_naming_strategy", new Renaming(tables))
                .property("hibernate.hbm2ddl.auto", ddl)
                .property(AggregateRootVersionIntegrator.ENABLED, Boolean.toString(rootBump));
    }

    String table(String logical) {
        return tables.get(logical);
    }

    <R> R inTransaction(Function<EntityManager, R> work) {
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            try {
                R result = work.apply(em);
                em.getTransaction().commit();
                return result;
            } finally {
                if (em.getTransaction().isActive()) {
                    em.getTransaction().rollback();
                }
            }
        }
    }

    void run(Consumer<EntityManager> work) {
        inTransaction(em -> {
            work.accept(em);
            return null;
        });
    }

    void close() {
        emf.close();
    }

    static final class Renaming extends PhysicalNamingStrategyStandardImpl {
        private final Map<String, String> tables;

        Renaming(Map<String, String> tables) {
            this.tables = tables;
        }

        @Override
        public Identifier toPhysicalTableName(Identifier logical, JdbcEnvironment context) {
            String renamed = tables.get(logical.getText().toLowerCase(java.util.Locale.ROOT));
            return renamed == null ? logical : Identifier.toIdentifier(renamed);
        }
    }
}
