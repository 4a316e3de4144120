package dev.holdfast.hibernate;

import dev.holdfast.testing.DatabaseTest;
import dev.holdfast.testing.TestDatabase;
import jakarta.persistence.EntityManager;
import jakarta.persistence.OptimisticLockException;
import jakarta.persistence.RollbackException;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/** The aggregate-root version bump of {@link AggregateMember}s, run on every database. */
class AggregateRootVersionTest {

    private static Jpa seeded(TestDatabase db, boolean rootBump) {
        Jpa jpa = new Jpa(db, db.dataSource(), rootBump);
        jpa.run(em -> {
            PurchaseOrder order = new PurchaseOrder(1, "new");
            order.addLine(11, 1);
            order.addLine(12, 1);
            em.persist(order);
        });
        return jpa;
    }

    private static long rootVersion(TestDatabase db, Jpa jpa) throws SQLException {
        return db.queryLong("SELECT version FROM " + jpa.table("hf_order") + " WHERE id = 1");
    }

    private static OrderLine line(EntityManager em, long id) {
        return em.find(OrderLine.class, id);
    }

    @DatabaseTest
    void hibernateAloneDoesNotBumpTheRootWhenAChildFieldChanges(TestDatabase db) throws Exception {
        Jpa jpa = seeded(db, false);
        try {
            jpa.run(em -> line(em, 11).quantity = 5);
            assertThat(rootVersion(db, jpa))
                    .as("peers.md §4: Hibernate leaves the root alone")
                    .isZero();
        } finally {
            jpa.close();
        }
    }

    @DatabaseTest
    void aChangedChildFieldBumpsTheRootOncePerFlush(TestDatabase db) throws Exception {
        Jpa jpa = seeded(db, true);
        try {
            assertThat(rootVersion(db, jpa)).isZero();
            long seen = jpa.inTransaction(em -> {
                PurchaseOrder order = em.find(PurchaseOrder.class, 1L);
                order.lines.get(0).quantity = 5;
                order.lines.get(1).quantity = 7;
                em.flush();
                return order.version;
            });
            assertThat(seen).as("the managed root shows its new version").isEqualTo(1);
            assertThat(rootVersion(db, jpa))
                    .as("two children changed: one increment")
                    .isEqualTo(1);
            assertThat(db.queryLong("SELECT quantity FROM " + jpa.table("hf_line") + " WHERE id = 12"))
                    .isEqualTo(7);

            // Two flushes with changes in one transaction: one increment each.
            jpa.run(em -> {
                line(em, 11).quantity = 6;
                em.flush();
                line(em, 12).quantity = 8;
            });
            assertThat(rootVersion(db, jpa)).isEqualTo(3);
            // A transaction that only reads bumps nothing.
            jpa.run(em -> assertThat(line(em, 11).quantity).isEqualTo(6));
            assertThat(rootVersion(db, jpa)).isEqualTo(3);
        } finally {
            jpa.close();
        }
    }

    @DatabaseTest
    void insertsDeletesAndElementCollectionsOfMembersBumpTheRootOnce(TestDatabase db) throws Exception {
        Jpa jpa = seeded(db, true);
        try {
            jpa.run(em -> em.find(PurchaseOrder.class, 1L).addLine(13, 2)); // insert by cascade
            assertThat(rootVersion(db, jpa)).isEqualTo(1);
            jpa.run(em -> {
                PurchaseOrder order = em.find(PurchaseOrder.class, 1L);
                order.lines.removeIf(l -> l.id == 13L); // delete by orphan removal
            });
            assertThat(rootVersion(db, jpa)).isEqualTo(2);
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + jpa.table("hf_line")))
                    .isEqualTo(2);
            jpa.run(em -> em.remove(line(em, 12))); // explicit delete
            assertThat(rootVersion(db, jpa)).isEqualTo(3);
            jpa.run(em -> line(em, 11).notes.add("fragile")); // a member's element collection
            assertThat(rootVersion(db, jpa)).isEqualTo(4);
            jpa.run(em -> em.persist(new OrderLine(14, em.find(PurchaseOrder.class, 1L), 1))); // persist directly
            assertThat(rootVersion(db, jpa)).isEqualTo(5);
            // The root changed too, in the same flush: still exactly one increment.
            jpa.run(em -> {
                PurchaseOrder order = em.find(PurchaseOrder.class, 1L);
                order.state = "paid";
                order.lines.get(0).quantity = 9;
            });
            assertThat(rootVersion(db, jpa)).isEqualTo(6);
            // The root's own element collection (owned) and a child: Hibernate's increment, not two.
            jpa.run(em -> {
                PurchaseOrder order = em.find(PurchaseOrder.class, 1L);
                order.tags.add("priority");
                order.lines.get(0).quantity = 10;
            });
            assertThat(rootVersion(db, jpa)).isEqualTo(7);
        } finally {
            jpa.close();
        }
    }

    @DatabaseTest
    void aMemberWithAnIdentityIdBumpsTheRootWhenPersisted(TestDatabase db) throws Exception {
        Jpa jpa = seeded(db, true);
        try {
            jpa.run(em -> em.persist(new OrderNote(em.find(PurchaseOrder.class, 1L), "call first")));
            assertThat(rootVersion(db, jpa)).isEqualTo(1);
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + jpa.table("hf_note")))
                    .isEqualTo(1);
        } finally {
            jpa.close();
        }
    }

    @DatabaseTest
    void anAutoFlushBeforeAQueryBumpsTheRootForWhatItFlushes(TestDatabase db) throws Exception {
        Jpa jpa = seeded(db, true);
        try {
            long quantity = jpa.inTransaction(em -> {
                line(em, 11).quantity = 42;
                // The query reads hf_line, so Hibernate flushes the change first (AUTO flush mode).
                return em.createQuery("select l.quantity from OrderLine l where l.id = 11", Integer.class)
                        .getSingleResult();
            });
            assertThat(quantity).isEqualTo(42);
            assertThat(rootVersion(db, jpa)).isEqualTo(1);
        } finally {
            jpa.close();
        }
    }

    @DatabaseTest
    void aStaleRootWriterFailsAfterAChildChanged(TestDatabase db) throws Exception {
        Jpa jpa = seeded(db, true);
        try (EntityManager stale = jpa.emf.createEntityManager()) {
            stale.getTransaction().begin();
            PurchaseOrder old = stale.find(PurchaseOrder.class, 1L); // version 0

            jpa.run(em -> line(em, 11).quantity = 3); // another user changes a line: root → 1

            old.state = "shipping";
            Throwable failure = catchThrowable(() -> stale.getTransaction().commit());
            assertThat(failure).isInstanceOf(RollbackException.class).hasCauseInstanceOf(OptimisticLockException.class);
            assertThat(db.queryString("SELECT state FROM " + jpa.table("hf_order") + " WHERE id = 1"))
                    .isEqualTo("new");
            assertThat(rootVersion(db, jpa)).isEqualTo(1);
        } finally {
            jpa.close();
        }
    }

    @DatabaseTest
    void twoUsersChangingDifferentChildrenCannotBothCommit(TestDatabase db) throws Exception {
        Jpa jpa = seeded(db, true);
        try (EntityManager ann = jpa.emf.createEntityManager()) {
            ann.getTransaction().begin();
            OrderLine annsLine = line(ann, 11);
            assertThat(annsLine.order.state).isNotNull(); // ann has read the aggregate at version 0

            jpa.run(em -> line(em, 12).quantity = 4); // bob changes the other line and commits

            annsLine.quantity = 9;
            Throwable failure = catchThrowable(() -> ann.getTransaction().commit());
            assertThat(failure).isInstanceOf(RollbackException.class).hasCauseInstanceOf(OptimisticLockException.class);
            assertThat(db.queryLong("SELECT quantity FROM " + jpa.table("hf_line") + " WHERE id = 11"))
                    .isEqualTo(1);
            assertThat(db.queryLong("SELECT quantity FROM " + jpa.table("hf_line") + " WHERE id = 12"))
                    .isEqualTo(4);
        } finally {
            jpa.close();
        }
    }

    @DatabaseTest
    void jpaLostUpdateStressSixteenThreadsTimesFiveHundred(TestDatabase db) throws Exception {
        int threads = 16;
        int increments = 500;
        Jpa jpa = new Jpa(db, db.newPool(threads), true);
        try {
            jpa.run(em -> {
                PurchaseOrder order = new PurchaseOrder(1, "counter");
                order.addLine(11, 0);
                em.persist(order);
            });
            AtomicLong conflicts = new AtomicLong();
            CyclicBarrier start = new CyclicBarrier(threads);
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<Integer>> done = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    done.add(pool.submit(() -> {
                        start.await();
                        int mine = 0;
                        while (mine < increments) {
                            try {
                                // The counter lives in the child, which has no version of its own:
                                // only the root bump stops lost updates here.
                                jpa.run(em -> line(em, 11).quantity++);
                                mine++;
                            } catch (RollbackException | OptimisticLockException e) {
                                conflicts.incrementAndGet();
                            }
                        }
                        return mine;
                    }));
                }
                int total = 0;
                for (Future<Integer> f : done) {
                    total += f.get(10, TimeUnit.MINUTES);
                }
                assertThat(total).isEqualTo(threads * increments);
            } finally {
                pool.shutdownNow();
            }
            long counter = db.queryLong("SELECT quantity FROM " + jpa.table("hf_line") + " WHERE id = 11");
            long version = rootVersion(db, jpa);
            System.out.printf(
                    "[%s] JPA lost-update stress: counter=%d root version=%d conflicts retried=%d%n",
                    db.id(), counter, version, conflicts.get());
            assertThat(counter).isEqualTo(8_000);
            assertThat(version).isEqualTo(8_000);
        } finally {
            jpa.close();
        }
    }
}
