package dev.holdfast.hibernate;

import org.hibernate.HibernateException;
import org.hibernate.collection.spi.PersistentCollection;
import org.hibernate.engine.spi.CollectionEntry;
import org.hibernate.engine.spi.EntityEntry;
import org.hibernate.engine.spi.PersistenceContext;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.engine.spi.Status;
import org.hibernate.event.spi.AutoFlushEvent;
import org.hibernate.event.spi.AutoFlushEventListener;
import org.hibernate.event.spi.FlushEvent;
import org.hibernate.event.spi.FlushEventListener;
import org.hibernate.event.spi.PostInsertEvent;
import org.hibernate.event.spi.PostInsertEventListener;
import org.hibernate.persister.entity.EntityPersister;
import org.jspecify.annotations.Nullable;

import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Before each flush: finds the roots of every member the flush will insert, update or delete, and
 * increments each root's version once with a version check ({@code UPDATE root SET version = v+1
 * WHERE id = ? AND version = v}), unless Hibernate updates the root itself in this flush (then it
 * increments the version anyway). A stale root raises Hibernate's {@code StaleObjectStateException},
 * which JPA reports as {@link jakarta.persistence.OptimisticLockException}.
 *
 * <p>A member inserted outside a flush (an IDENTITY id is inserted at {@code persist}) bumps its
 * root right away: no flush is computing updates at that moment.
 */
final class RootVersionBump implements FlushEventListener, AutoFlushEventListener, PostInsertEventListener {

    @Override
    public void onFlush(FlushEvent event) throws HibernateException {
        bumpRoots(event.getSession());
    }

    @Override
    public void onAutoFlush(AutoFlushEvent event) throws HibernateException {
        bumpRoots(event.getSession());
    }

    @Override
    public void onPostInsert(PostInsertEvent event) {
        SharedSessionContractImplementor session = event.getSession();
        if (event.getEntity() instanceof AggregateMember member
                && !session.getPersistenceContextInternal().isFlushing()) {
            Object root = root(session.getPersistenceContextInternal(), member);
            if (root != null) {
                bump(session, root);
            }
        }
    }

    @Override
    public boolean requiresPostCommitHandling(EntityPersister persister) {
        return false;
    }

    private static void bumpRoots(SharedSessionContractImplementor session) {
        PersistenceContext context = session.getPersistenceContextInternal();
        if (context.getNumberOfManagedEntities() == 0) {
            return;
        }
        Map<Object, Boolean> roots = new IdentityHashMap<>(); // root -> changed by Hibernate itself
        for (Map.Entry<Object, EntityEntry> e : context.reentrantSafeEntityEntries()) {
            Object entity = e.getKey();
            EntityEntry entry = e.getValue();
            if (entity instanceof AggregateMember member) {
                if (changes(session, entity, entry, false)) {
                    Object root = root(context, member);
                    if (root != null) {
                        roots.putIfAbsent(root, Boolean.FALSE);
                    }
                }
            } else if (entry.getPersister().isVersioned() && hasDirtyInverseCollection(session, entity, entry)) {
                // A member added to or removed from the root's mappedBy collection: the member is
                // persisted or orphan-deleted by the flush's cascade, after this pass.
                roots.putIfAbsent(entity, Boolean.FALSE);
            }
        }
        if (roots.isEmpty()) {
            return;
        }
        for (Map.Entry<Object, Boolean> r : roots.entrySet()) {
            Object root = r.getKey();
            EntityEntry entry = context.getEntry(root);
            if (entry == null || entry.getStatus() != Status.MANAGED || !entry.isExistsInDatabase()) {
                continue; // new or deleted root: its own insert or delete covers the aggregate
            }
            if (!changes(session, root, entry, true)) {
                bump(session, root);
            }
        }
    }

    /**
     * Whether this flush writes {@code entity}: a pending insert or delete, a dirty field, or a
     * dirty collection. With {@code versionedOnly}, only collections that make Hibernate increment
     * the owner's version count (owned ones; not {@code mappedBy}).
     */
    private static boolean changes(
            SharedSessionContractImplementor session, Object entity, EntityEntry entry, boolean versionedOnly) {
        Status status = entry.getStatus();
        if (status == Status.DELETED) {
            return !versionedOnly;
        }
        if (status != Status.MANAGED) {
            return false;
        }
        if (!entry.isExistsInDatabase()) {
            return !versionedOnly;
        }
        Object[] loaded = entry.getLoadedState();
        if (loaded == null) {
            return false; // read-only
        }
        EntityPersister persister = entry.getPersister();
        Object[] current = persister.getValues(entity);
        if (persister.findDirty(current, loaded, entity, session) != null) {
            return true;
        }
        PersistenceContext context = session.getPersistenceContextInternal();
        for (int i = 0; i < current.length; i++) {
            if (current[i] instanceof PersistentCollection<?> collection) {
                if (collection.isDirty()) {
                    CollectionEntry ce = context.getCollectionEntry(collection);
                    if (!versionedOnly
                            || ce == null
                            || ce.getLoadedPersister() == null
                            || ce.getLoadedPersister().isVersioned()) {
                        return true;
                    }
                }
            } else if (current[i] instanceof Collection<?> || current[i] instanceof Map<?, ?>) {
                if (current[i] != loaded[i] && !versionedOnly) {
                    return true; // a collection replaced by a plain one: Hibernate will recreate it
                }
            }
        }
        return false;
    }

    private static boolean hasDirtyInverseCollection(
            SharedSessionContractImplementor session, Object entity, EntityEntry entry) {
        if (entry.getStatus() != Status.MANAGED || !entry.isExistsInDatabase() || entry.getLoadedState() == null) {
            return false;
        }
        PersistenceContext context = session.getPersistenceContextInternal();
        for (Object value : entry.getPersister().getValues(entity)) {
            if (value instanceof PersistentCollection<?> collection
                    && (collection.isDirty() || collection.hasQueuedOperations())) {
                CollectionEntry ce = context.getCollectionEntry(collection);
                if (ce != null
                        && ce.getLoadedPersister() != null
                        && !ce.getLoadedPersister().isVersioned()) {
                    return true;
                }
            }
        }
        return false;
    }

    private static @Nullable Object root(PersistenceContext context, AggregateMember member) {
        Object root = member.aggregateRoot();
        if (root == null) {
            return null;
        }
        root = context.unproxy(root);
        if (root instanceof AggregateMember) {
            throw new IllegalStateException(
                    member.getClass().getName() + " names " + root.getClass().getName()
                            + " as its aggregate root, which is itself an AggregateMember: name the top root");
        }
        return root;
    }

    private static void bump(SharedSessionContractImplementor session, Object root) {
        EntityEntry entry = session.getPersistenceContextInternal().getEntry(root);
        if (entry == null) {
            throw new IllegalStateException(
                    "the aggregate root " + root.getClass().getName() + " is not managed by this session");
        }
        EntityPersister persister = entry.getPersister();
        if (!persister.isVersioned()) {
            throw new IllegalStateException(
                    "the aggregate root " + persister.getEntityName() + " has no @Version attribute");
        }
        Object next = persister.forceVersionIncrement(entry.getId(), entry.getVersion(), session);
        entry.forceLocked(root, next);
        persister.setValue(root, persister.getVersionPropertyIndex(), next);
    }
}
