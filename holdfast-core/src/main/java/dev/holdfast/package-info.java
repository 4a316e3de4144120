/**
 * Holdfast: consistency of DDD aggregates under concurrency on relational databases. The root package
 * holds the exceptions every technique shares: {@link dev.holdfast.HoldfastException} and {@link
 * dev.holdfast.DatabaseException}, an SQL failure that no technique could explain. The techniques live
 * in {@code pessimistic}, {@code pessimistic.offline}, {@code optimistic}, {@code optimistic.offline}
 * and {@code lease}.
 */
@NullMarked
package dev.holdfast;

import org.jspecify.annotations.NullMarked;
