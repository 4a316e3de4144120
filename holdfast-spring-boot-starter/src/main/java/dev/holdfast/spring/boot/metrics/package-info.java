/**
 * Micrometer metrics for Holdfast: lock acquisitions, refusals and waits, lease grants and losses,
 * version conflicts.
 */
@NullMarked
package dev.holdfast.spring.boot.metrics;

import org.jspecify.annotations.NullMarked;
