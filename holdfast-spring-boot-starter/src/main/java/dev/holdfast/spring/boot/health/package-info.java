/**
 * The {@code holdfast} health indicator ({@link dev.holdfast.spring.boot.health.HoldfastHealthIndicator}):
 * whether Holdfast can work here, and how its waiting calls are woken.
 */
@NullMarked
package dev.holdfast.spring.boot.health;

import org.jspecify.annotations.NullMarked;
