/**
 * Hibernate ORM integration: the version of an aggregate's root is bumped when any member changes
 * ({@link dev.holdfast.hibernate.AggregateMember}, registered by the service loader), and {@link
 * dev.holdfast.hibernate.JpaLocks} finds an entity for update with a wait bound that holds on every
 * database.
 */
@NullMarked
package dev.holdfast.hibernate;

import org.jspecify.annotations.NullMarked;
