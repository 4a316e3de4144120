package dev.holdfast.hibernate;

import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import jakarta.persistence.EntityManager;
import jakarta.persistence.OptimisticLockException;
import jakarta.persistence.RollbackException;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.support.JpaRepositoryFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/** The root bump through Spring Data JPA repositories (no Spring context: the repository factory alone). */
class SpringDataRepositoryTest {

    interface OrderLines extends JpaRepository<OrderLine, Long> {}

    interface Orders extends JpaRepository<PurchaseOrder, Long> {}

    @DatabaseTest
    void aChildSavedThroughARepositoryBumpsTheRootAndAStaleRootSaveFails(TestDatabase db) throws Exception {
        Jpa jpa = new Jpa(db, db.dataSource(), true);
        try {
            jpa.run(em -> {
                PurchaseOrder order = new PurchaseOrder(1, "new");
                order.addLine(11, 1);
                em.persist(order);
            });
            try (EntityManager stale = jpa.emf.createEntityManager()) {
                stale.getTransaction().begin();
                Orders staleOrders = new JpaRepositoryFactory(stale).getRepository(Orders.class);
                PurchaseOrder old = staleOrders.findById(1L).orElseThrow(); // version 0

                jpa.run(em -> {
                    OrderLines lines = new JpaRepositoryFactory(em).getRepository(OrderLines.class);
                    OrderLine line = lines.findById(11L).orElseThrow();
                    line.quantity = 5;
                    lines.save(line);
                });
                assertThat(db.queryLong("SELECT version FROM " + jpa.table("hf_order") + " WHERE id = 1"))
                        .isEqualTo(1);

                old.state = "shipping";
                staleOrders.save(old);
                Throwable failure = catchThrowable(() -> stale.getTransaction().commit());
                assertThat(failure)
                        .isInstanceOf(RollbackException.class)
                        .hasCauseInstanceOf(OptimisticLockException.class);
            }
            assertThat(db.queryString("SELECT state FROM " + jpa.table("hf_order") + " WHERE id = 1"))
                    .isEqualTo("new");
        } finally {
            jpa.close();
        }
    }
}
