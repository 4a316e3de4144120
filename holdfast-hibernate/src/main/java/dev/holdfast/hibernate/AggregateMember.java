package dev.holdfast.hibernate;

/**
 * An entity that belongs to an aggregate whose root is another, versioned entity ({@code @Version}).
 * With holdfast-hibernate on the class path, every flush that inserts, updates or deletes a member
 * (a changed field, a changed element collection, a removed member) increments the root's version
 * once, with a version check, as {@code OPTIMISTIC_FORCE_INCREMENT} would; so a concurrent writer of
 * any part of the aggregate fails with {@link jakarta.persistence.OptimisticLockException}.
 *
 * <pre>{@code
 * @Entity class OrderLine implements AggregateMember {
 *     @ManyToOne(optional = false) PurchaseOrder order;
 *     public Object aggregateRoot() { return order; }
 * }
 * }</pre>
 */
public interface AggregateMember {

    /**
     * The root entity of this member's aggregate: a managed entity (or proxy) with a {@code @Version}
     * attribute, never a member itself. {@code null} means the member belongs to no aggregate yet.
     *
     * @return the aggregate's root entity, or {@code null} if this member belongs to none yet
     */
    Object aggregateRoot();
}
