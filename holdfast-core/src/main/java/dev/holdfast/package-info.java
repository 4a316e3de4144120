/**
 * Holdfast: consistency of DDD aggregates under concurrency on relational databases. The root package
 * holds what every technique shares: the exceptions {@link dev.holdfast.HoldfastException} and {@link
 * dev.holdfast.DatabaseException} (an SQL failure that no technique could explain), and {@link
 * dev.holdfast.Holder}, who holds a lease or an offline lock. The techniques live
 * in {@code pessimistic}, {@code pessimistic.offline}, {@code optimistic}, {@code optimistic.offline}
 * and {@code lease}.
 */
@NullMarked
package dev.holdfast;

import org.jspecify.annotations.NullMarked;
